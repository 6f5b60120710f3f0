package experiment

import (
	"context"
	"fmt"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/diskio"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/sample"
	"github.com/agbench/agbench/internal/units"
)

// Disk is a storage experiment: the disk tester's steps (a single step, or a sweep of queue
// depth or threads) over one test file, an optional verification pass, the analysis's knee
// marks and the result.
//
// It keeps its own step loop rather than the runner's: a disk step is a stream of IOs
// issued by the tester's engines (io_uring or one thread per worker), each IO timed by the
// engine itself with its own warm-up, queue depth and rate; it has no virtual users running
// operations and no database session, which is what the runner drives.
type Disk struct {
	// Path is the test file; Prepare says how to make or reuse it; Keep leaves it afterwards.
	Path    string
	Prepare diskio.PrepareOptions
	Keep    bool
	// Steps are the steps in order; Sweep is the swept knob (nil for one step).
	Steps []diskio.Workload
	Sweep *diskio.Sweep
	// DiskSpd is the DiskSpd command line the steps came from, when it was given that way.
	DiskSpd *diskio.DiskSpdCommand
	// Verify writes a checksummed pattern first and reads it back at the end, in units of
	// Alignment bytes.
	Verify    bool
	Alignment int64
	// Size is the test file's data size asked for (0: the default or the file's own).
	Size int64

	// Report is the tester's report once Run has made the file (for the terminal).
	Report   *diskio.Report
	unfilled bool
}

// DiskStep is sent before step I of N runs; DiskStepEnded when it has run.
type DiskStep struct {
	I, N     int
	Workload diskio.Workload
}

// DiskStepEnded is sent when a disk step has run.
type DiskStepEnded struct{}

// Kind is "disk".
func (d *Disk) Kind() string { return "disk" }

// Validate checks every step and the verification's alignment before anything is written.
func (d *Disk) Validate() error {
	var errs []error
	if d.Path == "" || len(d.Steps) == 0 {
		errs = append(errs, agerr.BadInputf("disk: no test file or no step"))
	}
	seen := map[string]bool{}
	for _, w := range d.Steps {
		if err := diskio.CheckWorkload(&w); err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			errs = append(errs, err)
		}
		if w.Verify && w.Alignment()%512 != 0 {
			errs = append(errs, agerr.BadInputf("--verify: the alignment %d must be a multiple of 512", w.Alignment()))
		}
		for _, b := range w.BlockSizes {
			if w.Verify && b%w.Alignment() != 0 {
				errs = append(errs, agerr.BadInputf("--verify: block size %s is not a multiple of the alignment %s", units.FormatBytesExact(b), units.FormatBytesExact(w.Alignment())))
			}
		}
	}
	if len(d.Steps) > 0 && d.Size > 0 && d.Size < d.Steps[0].MaxBlock() {
		errs = append(errs, agerr.BadInputf("--block-size %s is larger than --size %s", units.FormatBytesExact(d.Steps[0].MaxBlock()), units.FormatBytesExact(d.Size)))
	}
	return agerr.Join(errs...)
}

// Sections is the disk tester's section, of the run and of its steps.
func (d *Disk) Sections() []string { return []string{result.ExtraDisk} }

// Run makes (or checks) the test file, runs the steps, verifies, records the result and
// removes the file unless Keep; Report is the tester's report afterwards (nil when
// nothing could be run).
func (d *Disk) Run(ctx context.Context, r *Running) error {
	logf := func(format string, v ...any) { r.Emit(Log{Line: fmt.Sprintf(format, v...)}) }
	tf, err := diskio.PrepareFile(ctx, d.Path, d.Prepare)
	if err != nil {
		return err
	}
	defer func() {
		if !d.Keep {
			if rerr := diskio.RemoveFile(tf); rerr != nil {
				logf("could not remove %s: %v", tf.Path, rerr)
			}
		}
	}()
	rec, err := r.Recorder()
	if err != nil {
		return err
	}
	rep := &diskio.Report{Start: rec.Result.Meta.Started, File: tf, Sweep: d.Sweep, DiskSpd: d.DiskSpd}
	if d.DiskSpd != nil {
		rep.Notes = append(rep.Notes, d.DiskSpd.Notes...)
	}
	if tf.Foreign {
		rep.Notes = append(rep.Notes, "the file was not created by agbench; used because of --force")
	}
	dev, derr := sample.DeviceForPath("/sys", tf.Path)
	if derr != nil {
		rep.Notes = append(rep.Notes, "no device view: "+derr.Error())
	}
	rep.Device = dev
	d.Report = rep
	runErr := d.steps(ctx, tf, rep, r, logf)
	switch {
	case runErr != nil:
	case ctx.Err() != nil:
		runErr = context.Canceled
	case rep.Verify != nil && rep.Verify.BadCount > 0:
		runErr = fmt.Errorf("verify: %d block(s) differ from what was written", rep.Verify.BadCount)
	}
	if err := diskio.FillResult(rep, rec.Result); err != nil {
		d.unfilled = true
		return agerr.Join(runErr, fmt.Errorf("results: %w", err))
	}
	return runErr
}

// Analysis is a disk run's analysis; a result the report could not fill is not analysed.
func (d *Disk) Analysis() (analyze.Options, bool) { return DiskAnalysis, !d.unfilled }

// Analysed gives the report the analysis's findings and writes them into its section.
func (d *Disk) Analysed(rec *Recorder, an *analyze.Run) {
	DiskAnalysed(d.Report, an)
	if err := diskio.SetExtra(d.Report, rec.Result); err != nil {
		rec.Warn("results: " + err.Error())
	}
}

// steps writes the verification pattern, runs the steps until one is cut short, and reads
// the pattern back.
func (d *Disk) steps(ctx context.Context, tf *diskio.TestFile, rep *diskio.Report, r *Running, logf func(string, ...any)) error {
	gen := uint64(time.Now().UnixNano())
	if d.Verify {
		logf("verify: writing a checksummed pattern over %s", tf.Path)
		if err := diskio.WritePattern(ctx, tf, d.Alignment, gen); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
	}
	for i, w := range d.Steps {
		if ctx.Err() != nil {
			break
		}
		r.Emit(DiskStep{I: i, N: len(d.Steps), Workload: w})
		s, err := diskio.RunStep(ctx, tf, w, diskio.StepOptions{Gen: gen})
		r.Emit(DiskStepEnded{})
		if err != nil {
			return err
		}
		rep.Steps = append(rep.Steps, s)
		if !s.Complete {
			break
		}
	}
	if d.Verify && ctx.Err() == nil {
		logf("verify: reading %s back", tf.Path)
		v, err := diskio.CheckPattern(ctx, tf, d.Alignment)
		rep.Verify = v
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
	}
	return nil
}

// DiskAnalysis are the analysis options of a disk run.
var DiskAnalysis = analyze.Options{LoadName: "outstanding IOs", Unit: "IOPS"}

// DiskAnalysed gives the report what the analysis found: each step's Little's-law check
// (computed once, by internal/analyze), the marks of a sweep, and that the verdicts the
// tester's warnings share are the analysis's to print.
func DiskAnalysed(rep *diskio.Report, run *analyze.Run) {
	if len(run.Variants) != 1 {
		return
	}
	an := run.Variants[0].Result
	rep.Analysed = true
	for _, l := range an.Little {
		if i := rep.RowOfLoad(l.Load); i >= 0 && !l.Judged() {
			rep.Steps[i].Little = diskio.LittleCheck{NotJudged: l.NotJudged}
		} else if i >= 0 {
			rep.Steps[i].Little = diskio.LittleCheck{Known: true, Outstanding: l.Load, Measured: l.Implied,
				Deviation: l.Ratio - 1, OK: l.Holds, Applies: !l.OpenLoop}
		}
	}
	if rep.Sweep != nil {
		rep.Marks = DiskMarks(rep, an)
	}
}

// DiskMarks places the analysis's knee points on the rows of the run.
func DiskMarks(rep *diskio.Report, an analyze.Analysis) *diskio.Marks {
	row := func(p *analyze.Point) int {
		if p == nil {
			return -1
		}
		return rep.RowOfLoad(p.Load)
	}
	k := an.Knee
	m := &diskio.Marks{Characteristic: row(k.Characteristic), Efficient: row(k.Efficient), Knee: row(k.Knee),
		Saturation: row(k.Saturation), RisingAtEnd: k.RisingAtEnd,
		Method: fmt.Sprintf("internal/analyze: knee by Kneedle on log2(outstanding) vs IOPS; efficient = most IOPS per ms of mean latency; saturation at %.0f%% of peak IOPS", analyze.SaturationShare*100)}
	return m
}
