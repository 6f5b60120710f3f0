// Package live shows an experiment's progress as it runs, from its event stream: bars
// with rate and time left on a terminal, plain lines otherwise (a log, a CI job). It owns
// the displays of the loads (stress, scan, tpcc run), tpcc build, the disk tester and
// the seeding.
//
// It shows only what is happening; the tables and sentences made from a result are
// internal/render's. It never reads flags, the environment or a result file, and must not
// import the command layer, the report or the renderer.
//
// Imports from agbench: only internal/experiment, internal/result, internal/runner,
// internal/seed, internal/units, internal/workload/tpcc.
package live
