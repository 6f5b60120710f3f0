package experiment

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/diskio"
	"github.com/agbench/agbench/internal/units"
)

// DiskSettings are a storage test's settings as a command line gives them: sizes and lists
// as text, read here, and Given saying which were given, so that a preset's values stand
// for the ones that were not.
type DiskSettings struct {
	// Args are the command's arguments: the test file, or from Dash on (Dash >= 0, the
	// place of --) DiskSpd's switches and its target.
	Args []string
	Dash int

	Size, BlockSize, QD, Threads, Align string
	Write                               int
	Random, Sequential, Shared, Direct  bool
	Dsync                               bool
	Duration, Warmup                    time.Duration
	Rate                                float64
	IOs                                 int64
	Preset, Sweep, Engine               string
	Seed                                uint64
	Verify, Force, Keep                 bool
	// Results is the folder of result folders (the run's Setup).
	Results string

	// Given reports whether the setting of a flag name ("block-size") was given.
	Given func(name string) bool
}

func init() {
	Register(Meta{Name: "disk", Description: "Storage load test (DiskSpd/fio-like) that walks up the load curve to the knee",
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
Presets: ` + diskPresetHelp(),
		Flags: func(fs *pflag.FlagSet) Builder {
			s := &DiskSettings{}
			s.register(fs)
			return func(args []string) (Experiment, error) {
				s.Args, s.Dash, s.Given = args, fs.ArgsLenAtDash(), fs.Changed
				return s.Spec()
			}
		}})
}

// register declares the disk flags on fs, with their defaults and help.
func (s *DiskSettings) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.Size, "size", "", "test file data size (e.g. 1G); default 1G for a new file, else the file's")
	fs.StringVarP(&s.BlockSize, "block-size", "b", "128K", "IO size, or several (8K,64K) picked at random per IO")
	fs.StringVar(&s.QD, "qd", "1", "outstanding IOs per thread; a list (1,4,16) sweeps it")
	fs.StringVar(&s.Threads, "threads", "1", "threads; a list (1,10,20) sweeps it")
	fs.StringVar(&s.Align, "align", "", "offset alignment of random IO (default: the smallest block size)")
	fs.IntVar(&s.Write, "write", 0, "percentage of IOs that are writes (0-100)")
	fs.BoolVar(&s.Random, "random", false, "random offsets")
	fs.BoolVar(&s.Sequential, "sequential", false, "sequential offsets, one stream per thread (the default)")
	fs.BoolVar(&s.Shared, "shared-sequential", false, "one sequential stream shared by all threads (DiskSpd -si)")
	fs.BoolVar(&s.Direct, "direct", true, "O_DIRECT: bypass the page cache (DiskSpd -Sh); false measures the page cache")
	fs.BoolVar(&s.Dsync, "dsync", false, "make every write durable before it completes (O_DSYNC)")
	fs.DurationVar(&s.Duration, "duration", 60*time.Second, "measured time per step")
	fs.DurationVar(&s.Warmup, "warmup", 5*time.Second, "warm-up per step, not measured")
	fs.Int64Var(&s.IOs, "ios", 0, "end each step's window once this many IOs completed in it, --duration then the upper bound (0: by --duration)")
	fs.Float64Var(&s.Rate, "rate", 0, "total IOPS to issue (0: as fast as the queue allows)")
	fs.StringVar(&s.Preset, "preset", "", "database IO shape: "+strings.Join(diskio.PresetNames(), ", "))
	fs.StringVar(&s.Sweep, "sweep", "", "walk the curve: qd=1,2,4,8,16,32,64 or threads=1,10,20,40")
	fs.BoolVar(&s.Verify, "verify", false, "write a checksummed pattern, run, read it all back and report blocks that differ")
	fs.BoolVar(&s.Force, "force", false, "use a file agbench did not create (its contents may be overwritten)")
	fs.BoolVar(&s.Keep, "keep", false, "keep the test file afterwards")
	fs.StringVar(&s.Engine, "engine", diskio.EngineAuto, "IO engine: auto (io_uring where the kernel allows), io_uring, sync")
	fs.Uint64Var(&s.Seed, "seed", 1, "seed of the offsets and the data")
	fs.StringVar(&s.Results, "results", "results", "folder for results/<time>-disk/result.json")
}

// diskPresetHelp lists the presets, one a line, for the command's help.
func diskPresetHelp() string {
	var s []string
	for _, n := range diskio.PresetNames() {
		p, _ := diskio.LookupPreset(n)
		s = append(s, fmt.Sprintf("\n  %-10s %s", n, p.Description))
	}
	return strings.Join(s, "")
}

// diskShapeSettings are the settings that change the IO shape, by flag name: DiskSpd's
// syntax says the shape itself, so they may not be mixed with it.
var diskShapeSettings = []string{"size", "block-size", "qd", "threads", "align", "write", "random", "sequential",
	"shared-sequential", "direct", "dsync", "duration", "warmup", "ios", "rate", "preset", "engine", "seed"}

// diskPlan is the file and the steps the settings ask for.
type diskPlan struct {
	path    string
	size    int64 // data bytes wanted, 0 for the default or the existing file's
	base    diskio.Workload
	sweep   *diskio.Sweep
	diskspd *diskio.DiskSpdCommand
}

// Spec checks the settings, every problem at once and without touching the file, and makes
// the experiment.
func (s *DiskSettings) Spec() (*Disk, error) {
	p, err := s.plan()
	if err != nil {
		return nil, err
	}
	steps := p.steps()
	size, maxBlock := int64(0), int64(0)
	if p.size > 0 {
		size = p.size + diskio.HeaderSize
	}
	for _, w := range steps {
		maxBlock = max(maxBlock, w.MaxBlock())
	}
	d := &Disk{Path: p.path, Keep: s.Keep, Size: p.size,
		Steps: steps, Sweep: p.sweep, DiskSpd: p.diskspd, Verify: s.Verify, Alignment: p.base.Alignment(),
		Prepare: diskio.PrepareOptions{Size: size, MinRegion: maxBlock, Force: s.Force}}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if _, err := diskio.ResolveEngine(p.base.Engine); err != nil {
		return nil, err
	}
	return d, nil
}

// steps are the plan's steps: one, or one per value of the sweep.
func (p *diskPlan) steps() []diskio.Workload {
	if p.sweep == nil {
		return []diskio.Workload{p.base}
	}
	var steps []diskio.Workload
	for _, v := range p.sweep.Values {
		steps = append(steps, p.sweep.Apply(p.base, v))
	}
	return steps
}

func (s *DiskSettings) given(name string) bool { return s.Given != nil && s.Given(name) }

// plan reads agbench's own syntax: an optional FILE, a preset and the flags over it.
func (s *DiskSettings) plan() (*diskPlan, error) {
	if s.Dash >= 0 {
		return s.planDiskSpd()
	}
	var errs []error
	p := &diskPlan{path: "agbench-disk.dat"}
	switch len(s.Args) {
	case 0:
	case 1:
		p.path = s.Args[0]
	default:
		errs = append(errs, agerr.BadInputf("disk takes one FILE, got %q", strings.Join(s.Args, " ")))
	}
	w := diskio.DefaultWorkload()
	if s.Preset != "" {
		pr, err := diskio.LookupPreset(s.Preset)
		if err != nil {
			errs = append(errs, err)
		} else {
			pr.Apply(&w)
		}
	}
	errs = append(errs, s.applySizes(&w, p)...)
	listed, lerrs := s.applyLists(&w)
	errs = append(errs, lerrs...)
	errs = append(errs, s.applyShape(&w)...)
	w.Duration, w.Warmup, w.Rate, w.Engine, w.Seed, w.Verify = s.Duration, s.Warmup, s.Rate, s.Engine, s.Seed, s.Verify
	w.IOs = s.IOs
	p.base = w
	sw, serrs := s.sweep(listed)
	p.sweep = sw
	if err := agerr.Join(append(errs, serrs...)...); err != nil {
		return nil, err
	}
	return p, nil
}

// applySizes sets the file size, block sizes and alignment that were given.
func (s *DiskSettings) applySizes(w *diskio.Workload, p *diskPlan) []error {
	var errs []error
	if s.given("size") {
		n, err := units.ParseBytes(s.Size)
		if err != nil || n <= 0 {
			errs = append(errs, agerr.BadInputf("--size %q: a positive size such as 1G or 512M", s.Size))
		}
		p.size = n
	}
	if s.given("block-size") || s.Preset == "" {
		w.BlockSizes = nil
		for _, b := range strings.Split(s.BlockSize, ",") {
			n, err := units.ParseBytes(b)
			if err != nil || n <= 0 {
				errs = append(errs, agerr.BadInputf("--block-size %q: a positive size such as 4K or 128K", b))
				continue
			}
			w.BlockSizes = append(w.BlockSizes, n)
		}
		if !s.given("align") && len(w.BlockSizes) > 0 {
			w.Align = 0
		}
	}
	if s.given("align") {
		n, err := units.ParseBytes(s.Align)
		if err != nil || n <= 0 {
			errs = append(errs, agerr.BadInputf("--align %q: a positive size such as 4K", s.Align))
		}
		w.Align = n
	}
	return errs
}

// applyLists sets the queue depth and threads that were given; a list of several values
// is returned by name, to be swept.
func (s *DiskSettings) applyLists(w *diskio.Workload) (map[string][]int, []error) {
	var errs []error
	listed := map[string][]int{}
	for _, k := range []struct {
		name string
		val  string
		dst  *int
		hi   int
	}{{"qd", s.QD, &w.QD, diskio.MaxQD}, {"threads", s.Threads, &w.Threads, diskio.MaxThreads}} {
		if !s.given(k.name) {
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
	return listed, errs
}

// applyShape sets the IO pattern that was given: writes, random or sequential, direct, dsync.
func (s *DiskSettings) applyShape(w *diskio.Workload) []error {
	var errs []error
	if s.given("write") {
		w.WritePct = s.Write
	}
	if s.given("random") && s.given("sequential") && s.Random && s.Sequential {
		errs = append(errs, agerr.BadInputf("--random and --sequential: choose one"))
	}
	if s.given("random") {
		w.Random = s.Random
	}
	if s.given("sequential") {
		w.Random = !s.Sequential
	}
	if s.given("shared-sequential") {
		w.SharedSequential = s.Shared
	}
	if s.given("direct") {
		w.Direct = s.Direct
	}
	if s.given("dsync") {
		w.Dsync = s.Dsync
	}
	return errs
}

// sweep is --sweep, or the one knob given a list of values; one knob is swept at a time.
func (s *DiskSettings) sweep(listed map[string][]int) (*diskio.Sweep, []error) {
	if s.Sweep != "" {
		var errs []error
		sw, err := diskio.ParseSweep(s.Sweep)
		if err != nil {
			errs = append(errs, err)
		}
		if len(listed) > 0 {
			errs = append(errs, agerr.BadInputf("--sweep with a list in --qd or --threads: sweep one knob at a time"))
		}
		return sw, errs
	}
	if len(listed) > 1 {
		return nil, []error{agerr.BadInputf("--qd and --threads both list values: sweep one knob at a time")}
	}
	for k, v := range listed {
		return &diskio.Sweep{Key: k, Values: v}, nil
	}
	return nil, nil
}

// planDiskSpd reads DiskSpd's syntax after --; agbench's own run settings still apply.
func (s *DiskSettings) planDiskSpd() (*diskPlan, error) {
	var errs []error
	if s.Dash > 0 {
		errs = append(errs, agerr.BadInputf("with DiskSpd's syntax the target file goes after --, got %q before it", strings.Join(s.Args[:s.Dash], " ")))
	}
	for _, n := range diskShapeSettings {
		if s.given(n) {
			errs = append(errs, agerr.BadInputf("--%s: use DiskSpd's own switches after -- instead, or agbench's flags without --", n))
		}
	}
	ds, err := diskio.ParseDiskSpd(s.Args[s.Dash:])
	if err != nil {
		errs = append(errs, err)
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	ds.Workload.Verify = s.Verify
	p := &diskPlan{path: ds.Path, size: ds.CreateSize, base: ds.Workload, diskspd: ds}
	if s.Sweep != "" {
		sw, err := diskio.ParseSweep(s.Sweep)
		if err != nil {
			return nil, err
		}
		p.sweep = sw
	}
	return p, nil
}
