package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/diskio"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/live"
	"github.com/agbench/agbench/internal/render"
)

func init() { registerKind("disk", newDiskCmd) }

// diskFlags are `agbench disk`'s flags (the DiskSpd syntax after -- is the other way in).
type diskFlags struct {
	experiment.DiskSettings
	resultsDir string

	d *experiment.Disk // the experiment check made
}

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
	fl.StringVar(&f.Size, "size", "", "test file data size (e.g. 1G); default 1G for a new file, else the file's")
	fl.StringVarP(&f.BlockSize, "block-size", "b", "128K", "IO size, or several (8K,64K) picked at random per IO")
	fl.StringVar(&f.QD, "qd", "1", "outstanding IOs per thread; a list (1,4,16) sweeps it")
	fl.StringVar(&f.Threads, "threads", "1", "threads; a list (1,10,20) sweeps it")
	fl.StringVar(&f.Align, "align", "", "offset alignment of random IO (default: the smallest block size)")
	fl.IntVar(&f.Write, "write", 0, "percentage of IOs that are writes (0-100)")
	fl.BoolVar(&f.Random, "random", false, "random offsets")
	fl.BoolVar(&f.Sequential, "sequential", false, "sequential offsets, one stream per thread (the default)")
	fl.BoolVar(&f.Shared, "shared-sequential", false, "one sequential stream shared by all threads (DiskSpd -si)")
	fl.BoolVar(&f.Direct, "direct", true, "O_DIRECT: bypass the page cache (DiskSpd -Sh); false measures the page cache")
	fl.BoolVar(&f.Dsync, "dsync", false, "make every write durable before it completes (O_DSYNC)")
	fl.DurationVar(&f.Duration, "duration", 60*time.Second, "measured time per step")
	fl.DurationVar(&f.Warmup, "warmup", 5*time.Second, "warm-up per step, not measured")
	fl.Int64Var(&f.IOs, "ios", 0, "end each step's window once this many IOs completed in it, --duration then the upper bound (0: by --duration)")
	fl.Float64Var(&f.Rate, "rate", 0, "total IOPS to issue (0: as fast as the queue allows)")
	fl.StringVar(&f.Preset, "preset", "", "database IO shape: "+strings.Join(diskio.PresetNames(), ", "))
	fl.StringVar(&f.Sweep, "sweep", "", "walk the curve: qd=1,2,4,8,16,32,64 or threads=1,10,20,40")
	fl.BoolVar(&f.Verify, "verify", false, "write a checksummed pattern, run, read it all back and report blocks that differ")
	fl.BoolVar(&f.Force, "force", false, "use a file agbench did not create (its contents may be overwritten)")
	fl.BoolVar(&f.Keep, "keep", false, "keep the test file afterwards")
	fl.StringVar(&f.Engine, "engine", diskio.EngineAuto, "IO engine: auto (io_uring where the kernel allows), io_uring, sync")
	fl.Uint64Var(&f.Seed, "seed", 1, "seed of the offsets and the data")
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

// check validates the command line and makes the experiment, without touching the file
// (cobra's PreRunE, and a plan's check).
func (f *diskFlags) check(c *cobra.Command, args []string) error {
	f.Args, f.Dash, f.Given = args, c.ArgsLenAtDash(), c.Flags().Changed
	var err error
	f.d, err = f.Spec()
	return err
}

func runDisk(c *cobra.Command, a *app, f *diskFlags, args []string) error {
	d := f.d
	show := live.NewDisk(a.stderr, a.interactive, d.Path)
	d.Prepare.Progress = show.Fill
	out, runErr := experiment.Run(c.Context(), d, experiment.Setup{Version: version, Args: diskArgv(c, args), Results: f.resultsDir, Events: show.Event})
	if out == nil || d.Report == nil {
		return runErr
	}
	if len(d.Report.Steps) > 0 || d.Report.Verify != nil {
		render.Disk(a.stdout, d.Report)
	}
	render.Analysis(a.stdout, out.Analysis)
	if out.Path != "" {
		fmt.Fprintf(a.stdout, "\nresults: %s\n", out.Path)
	}
	return runErr
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
