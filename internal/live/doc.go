// Package live shows an experiment's progress as it runs, from its event stream: bars
// with rate and time left on a terminal, plain lines otherwise (a log, a CI job). It owns
// the disk tester's and the seeding's displays.
//
// It shows only what is happening; the tables and sentences made from a result are
// internal/render's. It never reads flags, the environment or a result file, and must not
// import the command layer, the report or the renderer.
//
// Imports from agbench: only internal/experiment, internal/seed, internal/units.
package live
