package diskio

import "github.com/agbench/agbench/internal/result/diskrun"

// The tester's figures are the result's disk sections, declared once in
// internal/result/diskrun (which internal/render reads); these are their names here.
type (
	Workload       = diskrun.Workload
	Sweep          = diskrun.Sweep
	DiskSpdCommand = diskrun.DiskSpdCommand
	TestFile       = diskrun.TestFile
	StepResult     = diskrun.StepResult
	OpStats        = diskrun.OpStats
	Pct            = diskrun.Pct
	ThreadStats    = diskrun.ThreadStats
	LittleCheck    = diskrun.LittleCheck
	DeviceView     = diskrun.DeviceView
	PressureView   = diskrun.PressureView
	CPUView        = diskrun.CPUView
	VerifyReport   = diskrun.VerifyReport
	Marks          = diskrun.Marks
	RunExtra       = diskrun.RunExtra
	Report         = diskrun.Report
)

// MaxBadReported caps the offsets kept in a VerifyReport.
const MaxBadReported = diskrun.MaxBadReported
