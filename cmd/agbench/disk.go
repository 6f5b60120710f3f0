package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/diskio"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/units"
)

func init() { registerKind("disk", newDiskCmd) }

// diskFlags are `agbench disk`'s own flags (the DiskSpd syntax after -- is the other way in).
type diskFlags struct {
	size, block, qd, threads, align    string
	write                              int
	random, sequential, shared, direct bool
	dsync, verify, force, keep         bool
	duration, warmup                   time.Duration
	rate                               float64
	ios                                int64
	preset, sweep, engine, resultsDir  string
	seed                               uint64

	d *experiment.Disk // the experiment check made
}

// workloadFlags change the IO shape; they may not be mixed with DiskSpd's syntax.
var workloadFlags = []string{"size", "block-size", "qd", "threads", "align", "write", "random", "sequential",
	"shared-sequential", "direct", "dsync", "duration", "warmup", "ios", "rate", "preset", "engine", "seed"}

func newDiskCmd(a *app) *cobra.Command {
	var f diskFlags
	c := &cobra.Command{
		Use: "disk [FILE] [flags] | disk [flags] -- DISKSPD-ARGS... FILE",
		Long: `disk measures a file's storage the way the storage article does: a single-thread
baseline, then threads or queue depth raised step by step (--sweep) until latency climbs
and throughput stops: the characteristic latency, the knee and saturation are marked.
Each row shows the tester's view (IOPS, MB/s, latency percentiles to 99.9999) beside the
block device's own (/proc/diskstats) and IO pressure, with a Little's-law check.

The test file is created (incompressible data, marked with an agbench header) and removed
afterwards unless --keep; a file agbench did not create is refused unless --force.
DiskSpd's syntax is accepted after --, e.g.
  agbench disk -- -d60 -b128K -o1 -t1 -Sh -L -w0 -c1G testfile.dat
Presets: ` + presetHelp(),
		Args:    cobra.ArbitraryArgs,
		PreRunE: func(c *cobra.Command, args []string) error { return f.check(c, args) },
		RunE:    func(c *cobra.Command, args []string) error { return runDisk(c, a, &f, args) },
	}
	fl := c.Flags()
	fl.StringVar(&f.size, "size", "", "test file data size (e.g. 1G); default 1G for a new file, else the file's")
	fl.StringVarP(&f.block, "block-size", "b", "128K", "IO size, or several (8K,64K) picked at random per IO")
	fl.StringVar(&f.qd, "qd", "1", "outstanding IOs per thread; a list (1,4,16) sweeps it")
	fl.StringVar(&f.threads, "threads", "1", "threads; a list (1,10,20) sweeps it")
	fl.StringVar(&f.align, "align", "", "offset alignment of random IO (default: the smallest block size)")
	fl.IntVar(&f.write, "write", 0, "percentage of IOs that are writes (0-100)")
	fl.BoolVar(&f.random, "random", false, "random offsets")
	fl.BoolVar(&f.sequential, "sequential", false, "sequential offsets, one stream per thread (the default)")
	fl.BoolVar(&f.shared, "shared-sequential", false, "one sequential stream shared by all threads (DiskSpd -si)")
	fl.BoolVar(&f.direct, "direct", true, "O_DIRECT: bypass the page cache (DiskSpd -Sh); false measures the page cache")
	fl.BoolVar(&f.dsync, "dsync", false, "make every write durable before it completes (O_DSYNC)")
	fl.DurationVar(&f.duration, "duration", 60*time.Second, "measured time per step")
	fl.DurationVar(&f.warmup, "warmup", 5*time.Second, "warm-up per step, not measured")
	fl.Int64Var(&f.ios, "ios", 0, "end each step's window once this many IOs completed in it, --duration then the upper bound (0: by --duration)")
	fl.Float64Var(&f.rate, "rate", 0, "total IOPS to issue (0: as fast as the queue allows)")
	fl.StringVar(&f.preset, "preset", "", "database IO shape: "+strings.Join(diskio.PresetNames(), ", "))
	fl.StringVar(&f.sweep, "sweep", "", "walk the curve: qd=1,2,4,8,16,32,64 or threads=1,10,20,40")
	fl.BoolVar(&f.verify, "verify", false, "write a checksummed pattern, run, read it all back and report blocks that differ")
	fl.BoolVar(&f.force, "force", false, "use a file agbench did not create (its contents may be overwritten)")
	fl.BoolVar(&f.keep, "keep", false, "keep the test file afterwards")
	fl.StringVar(&f.engine, "engine", diskio.EngineAuto, "IO engine: auto (io_uring where the kernel allows), io_uring, sync")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the offsets and the data")
	fl.StringVar(&f.resultsDir, "results", "results", "folder for results/<time>-disk/result.json")
	return c
}

func presetHelp() string {
	var s []string
	for _, n := range diskio.PresetNames() {
		p, _ := diskio.LookupPreset(n)
		s = append(s, fmt.Sprintf("\n  %-10s %s", n, p.Description))
	}
	return strings.Join(s, "")
}

// diskPlan is a validated run: the file and the steps.
type diskPlan struct {
	path    string
	size    int64 // data bytes wanted, 0 for the default or the existing file's
	base    diskio.Workload
	sweep   *diskio.Sweep
	steps   []diskio.Workload
	diskspd *diskio.DiskSpdCommand
}

func planDisk(c *cobra.Command, f *diskFlags, args []string) (*diskPlan, error) {
	dash := c.ArgsLenAtDash()
	if dash >= 0 {
		return planDiskSpd(c, f, args, dash)
	}
	var errs []error
	p := &diskPlan{path: "agbench-disk.dat"}
	switch len(args) {
	case 0:
	case 1:
		p.path = args[0]
	default:
		errs = append(errs, agerr.BadInputf("disk takes one FILE, got %q", strings.Join(args, " ")))
	}
	w := diskio.DefaultWorkload()
	if f.preset != "" {
		pr, err := diskio.LookupPreset(f.preset)
		if err != nil {
			errs = append(errs, err)
		} else {
			pr.Apply(&w)
		}
	}
	ch := c.Flags().Changed
	errs = append(errs, f.applySizes(ch, &w, p)...)
	listed := map[string][]int{}
	for _, k := range []struct {
		name string
		val  string
		dst  *int
		hi   int
	}{{"qd", f.qd, &w.QD, diskio.MaxQD}, {"threads", f.threads, &w.Threads, diskio.MaxThreads}} {
		if !ch(k.name) {
			continue
		}
		v, err := diskio.ParseIntList(k.val, "--"+k.name, 1, k.hi)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*k.dst = v[0]
		if len(v) > 1 {
			listed[k.name] = v
		}
	}
	errs = append(errs, f.applyShape(ch, &w)...)
	w.Duration, w.Warmup, w.Rate, w.Engine, w.Seed, w.Verify = f.duration, f.warmup, f.rate, f.engine, f.seed, f.verify
	w.IOs = f.ios
	p.base = w

	if f.sweep != "" {
		s, err := diskio.ParseSweep(f.sweep)
		if err != nil {
			errs = append(errs, err)
		}
		p.sweep = s
		if len(listed) > 0 {
			errs = append(errs, agerr.BadInputf("--sweep with a list in --qd or --threads: sweep one knob at a time"))
		}
	} else if len(listed) > 1 {
		errs = append(errs, agerr.BadInputf("--qd and --threads both list values: sweep one knob at a time"))
	} else {
		for k, v := range listed {
			p.sweep = &diskio.Sweep{Key: k, Values: v}
		}
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	return p, p.expand()
}

// applySizes sets the file size, block sizes and alignment that were given.
func (f *diskFlags) applySizes(ch func(string) bool, w *diskio.Workload, p *diskPlan) []error {
	var errs []error
	if ch("size") {
		n, err := units.ParseBytes(f.size)
		if err != nil || n <= 0 {
			errs = append(errs, agerr.BadInputf("--size %q: a positive size such as 1G or 512M", f.size))
		}
		p.size = n
	}
	if ch("block-size") || f.preset == "" {
		w.BlockSizes = nil
		for _, s := range strings.Split(f.block, ",") {
			n, err := units.ParseBytes(s)
			if err != nil || n <= 0 {
				errs = append(errs, agerr.BadInputf("--block-size %q: a positive size such as 4K or 128K", s))
				continue
			}
			w.BlockSizes = append(w.BlockSizes, n)
		}
		if !ch("align") && len(w.BlockSizes) > 0 {
			w.Align = 0
		}
	}
	if ch("align") {
		n, err := units.ParseBytes(f.align)
		if err != nil || n <= 0 {
			errs = append(errs, agerr.BadInputf("--align %q: a positive size such as 4K", f.align))
		}
		w.Align = n
	}
	return errs
}

// applyShape sets the IO pattern that was given: writes, random or sequential, direct, dsync.
func (f *diskFlags) applyShape(ch func(string) bool, w *diskio.Workload) []error {
	var errs []error
	if ch("write") {
		w.WritePct = f.write
	}
	if ch("random") && ch("sequential") && f.random && f.sequential {
		errs = append(errs, agerr.BadInputf("--random and --sequential: choose one"))
	}
	if ch("random") {
		w.Random = f.random
	}
	if ch("sequential") {
		w.Random = !f.sequential
	}
	if ch("shared-sequential") {
		w.SharedSequential = f.shared
	}
	if ch("direct") {
		w.Direct = f.direct
	}
	if ch("dsync") {
		w.Dsync = f.dsync
	}
	return errs
}

// planDiskSpd reads DiskSpd's syntax after --; agbench's own run flags still apply.
func planDiskSpd(c *cobra.Command, f *diskFlags, args []string, dash int) (*diskPlan, error) {
	var errs []error
	if dash > 0 {
		errs = append(errs, agerr.BadInputf("with DiskSpd's syntax the target file goes after --, got %q before it", strings.Join(args[:dash], " ")))
	}
	for _, n := range workloadFlags {
		if c.Flags().Changed(n) {
			errs = append(errs, agerr.BadInputf("--%s: use DiskSpd's own switches after -- instead, or agbench's flags without --", n))
		}
	}
	ds, err := diskio.ParseDiskSpd(args[dash:])
	if err != nil {
		errs = append(errs, err)
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	ds.Workload.Verify = f.verify
	p := &diskPlan{path: ds.Path, size: ds.CreateSize, base: ds.Workload, diskspd: ds}
	if f.sweep != "" {
		s, err := diskio.ParseSweep(f.sweep)
		if err != nil {
			return nil, err
		}
		p.sweep = s
	}
	return p, p.expand()
}

// expand makes the steps (experiment.Disk.Validate checks them).
func (p *diskPlan) expand() error {
	p.steps = []diskio.Workload{p.base}
	if p.sweep != nil {
		p.steps = nil
		for _, v := range p.sweep.Values {
			p.steps = append(p.steps, p.sweep.Apply(p.base, v))
		}
	}
	return nil
}

// check validates the command line and makes the experiment, without touching the file
// (cobra's PreRunE, and a plan's check).
func (f *diskFlags) check(c *cobra.Command, args []string) error {
	p, err := planDisk(c, f, args)
	if err != nil {
		return err
	}
	size := int64(0)
	if p.size > 0 {
		size = p.size + diskio.HeaderSize
	}
	maxBlock := int64(0)
	for _, w := range p.steps {
		maxBlock = max(maxBlock, w.MaxBlock())
	}
	f.d = &experiment.Disk{Path: p.path, Keep: f.keep, Size: p.size,
		Steps: p.steps, Sweep: p.sweep, DiskSpd: p.diskspd, Verify: f.verify, Alignment: p.base.Alignment(),
		Prepare: diskio.PrepareOptions{Size: size, MinRegion: maxBlock, Force: f.force}}
	if err := f.d.Validate(); err != nil {
		return err
	}
	_, err = diskio.ResolveEngine(p.base.Engine)
	return err
}

func runDisk(c *cobra.Command, a *app, f *diskFlags, args []string) error {
	d := f.d
	show := &diskShow{a: a, path: d.Path, lastPct: -1, stop: func() {}}
	d.Prepare.Progress = show.fill
	out, runErr := experiment.Run(c.Context(), d, experiment.Setup{Version: version, Args: diskArgv(c, args), Results: f.resultsDir, Events: show.event})
	if out == nil || d.Report == nil {
		return runErr
	}
	if len(d.Report.Steps) > 0 || d.Report.Verify != nil {
		d.Report.WriteText(a.stdout)
	}
	render.Analysis(a.stdout, out.Analysis)
	if out.Path != "" {
		fmt.Fprintf(a.stdout, "\nresults: %s\n", out.Path)
	}
	return runErr
}

// diskShow shows a disk run's progress: the test file's creation and each step, as a bar
// on a terminal and as lines otherwise.
type diskShow struct {
	a       *app
	path    string
	fillBar *progressbar.ProgressBar
	lastPct int64
	stop    func()
}

func (s *diskShow) logf(format string, v ...any) { fmt.Fprintf(s.a.stderr, format+"\n", v...) }

func (s *diskShow) fill(done, total int64) {
	if s.a.interactive {
		if s.fillBar == nil {
			s.fillBar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(s.a.stderr), progressbar.OptionShowBytes(true),
				progressbar.OptionSetDescription("creating "+s.path), progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		_ = s.fillBar.Set64(done)
		if done == total {
			_ = s.fillBar.Finish()
		}
		return
	}
	if pct := done * 100 / total; pct/10 != s.lastPct/10 {
		s.lastPct = pct
		s.logf("creating %s: %d%%", s.path, pct)
	}
}

func (s *diskShow) event(e experiment.Event) {
	switch e := e.(type) {
	case experiment.Log:
		s.logf("%s", e.Line)
	case experiment.DiskStep:
		w := e.Workload
		desc := fmt.Sprintf("step %d/%d: %s, %s + %s warm-up", e.I+1, e.N, w.Describe(), w.Duration, w.Warmup)
		if s.a.interactive {
			s.stop = stepBar(s.a, desc, w.Warmup+w.Duration)
		} else {
			s.logf("%s", desc)
		}
	case experiment.DiskStepEnded:
		s.stop()
		s.stop = func() {}
	}
}

// stepBar shows a step's time on a terminal until the returned function is called.
func stepBar(a *app, desc string, total time.Duration) func() {
	bar := progressbar.NewOptions64(total.Milliseconds(), progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription(desc),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				_ = bar.Finish()
				return
			case <-t.C:
				_ = bar.Set64(min(time.Since(start).Milliseconds(), total.Milliseconds()))
			}
		}
	}()
	return func() { close(done); <-finished }
}

// diskArgv rebuilds the command line from what cobra parsed (flags set, FILE, DiskSpd's
// switches after --), for the result's meta.
func diskArgv(c *cobra.Command, args []string) []string {
	argv := []string{"disk"}
	c.Flags().Visit(func(f *pflag.Flag) { argv = append(argv, "--"+f.Name+"="+f.Value.String()) })
	if d := c.ArgsLenAtDash(); d >= 0 {
		return append(append(append(argv, args[:d]...), "--"), args[d:]...)
	}
	return append(argv, args...)
}
