// Package harness owns what every comparator benchmark under bench/ shares: the rounds and
// the order of the sides within each (rotated, so that a drifting machine favours no one),
// medians and the median of per-round ratios (internal/stats), running a comparator and
// taking its CPU time, a throwaway cluster on free loopback ports, and the machine's
// facts (cores, memory, kernel, CPU model, load) printed with every result, and the "before"
// agbench binary built from a git revision to measure the new one beside. A benchmark is
// a program, not a test: it never imports a package meant for tests.
//
// Imports from agbench: only internal/cluster, internal/freeport, internal/result, internal/stats.
package harness
