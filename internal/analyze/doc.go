// Package analyze owns the judgement of a run: the knee of a sweep (characteristic latency,
// most efficient point, Kneedle knee, saturation point, SLO point), the Universal
// Scalability Law fit, Little's law per step, what saturated (one sentence with evidence),
// and the validity verdicts that say when a run does not measure what it claims.
//
// Everything here is a pure function of numbers taken from a result: no clock, no files,
// no network. Thresholds are named constants next to the rule that uses them.
//
// Of agbench it imports only internal/result (the schema it reads), internal/routing (the
// routing list a routed run's read intent is judged against: pure logic) and the leaf
// helpers stats and units; it must not import the runner, the samplers, workloads, the cluster or
// the report.
//
// Imports from agbench: only internal/result, internal/routing, internal/stats, internal/units.
package analyze
