// Package diskrun holds the storage tester's sections of a result (Result.Extra["disk"]
// of the run and of each step) and the report the disk tables show: the types are written
// by internal/diskio (whose Workload, StepResult, Report and the others are these types)
// and read by internal/render, which prints them from a result file alone as from a run.
//
// It is the schema only: no IO, no validation of a workload (diskio's), no printing.
//
// Imports from agbench: only internal/result, internal/units.
package diskrun
