package experiment

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/diskio"
	"github.com/agbench/agbench/internal/seed"
	"github.com/agbench/agbench/internal/workload/readahead"
)

// diskSettings are the disk command's defaults with the given settings over them; given
// names the flags set, as the command line does.
func diskSettings(args []string, dash int, set func(*DiskSettings), given ...string) *DiskSettings {
	s := &DiskSettings{Args: args, Dash: dash, BlockSize: "128K", QD: "1", Threads: "1", Direct: true,
		Duration: time.Minute, Warmup: 5 * time.Second, Engine: diskio.EngineSync, Seed: 1}
	if set != nil {
		set(s)
	}
	s.Given = func(n string) bool { return slices.Contains(given, n) }
	return s
}

// Every refused disk command line is bad input, with the problems in the order given and
// each message as the command has always printed it.
func TestDiskSettingsRefused(t *testing.T) {
	cases := []struct {
		name string
		s    *DiskSettings
		want string
	}{
		{"two files", diskSettings([]string{"a", "b"}, -1, nil), `disk takes one FILE, got "a b"`},
		{"bad size", diskSettings(nil, -1, func(s *DiskSettings) { s.Size = "12Q" }, "size"), `--size "12Q": a positive size such as 1G or 512M`},
		{"block over size", diskSettings(nil, -1, func(s *DiskSettings) { s.Size, s.BlockSize = "1M", "2M" }, "size", "block-size"),
			"--block-size 2M is larger than --size 1M"},
		{"every problem at once", diskSettings(nil, -1, func(s *DiskSettings) { s.BlockSize, s.QD, s.Preset = "12Q", "0", "nosuch" }, "block-size", "qd", "preset"),
			"--preset \"nosuch\": one of " + strings.Join(diskio.PresetNames(), ", ") + "\n--block-size \"12Q\": a positive size such as 4K or 128K\n--qd: \"0\" is not a whole number from 1 to 4096"},
		{"random and sequential", diskSettings(nil, -1, func(s *DiskSettings) { s.Random, s.Sequential = true, true }, "random", "sequential"),
			"--random and --sequential: choose one"},
		{"two lists", diskSettings(nil, -1, func(s *DiskSettings) { s.QD, s.Threads = "1,2", "1,2" }, "qd", "threads"),
			"--qd and --threads both list values: sweep one knob at a time"},
		{"sweep and a list", diskSettings(nil, -1, func(s *DiskSettings) { s.QD, s.Sweep = "1,2", "threads=1,2" }, "qd", "sweep"),
			"--sweep with a list in --qd or --threads: sweep one knob at a time"},
		{"bad sweep", diskSettings(nil, -1, func(s *DiskSettings) { s.Sweep = "depth=1,2" }, "sweep"),
			`--sweep "depth=1,2": want qd=1,2,4,... or threads=1,10,20,...`},
		{"bad engine", diskSettings(nil, -1, func(s *DiskSettings) { s.Engine = "aio" }, "engine"), `--engine "aio": one of auto, io_uring, sync`},
		{"negative ios", diskSettings(nil, -1, func(s *DiskSettings) { s.IOs = -1 }, "ios"),
			"--ios -1: must be 0 (end by --duration) or a positive number of IOs"},
		{"DiskSpd with a shape flag", diskSettings([]string{"-b4K", "f"}, 0, func(s *DiskSettings) { s.IOs = 100 }, "ios"),
			"--ios: use DiskSpd's own switches after -- instead, or agbench's flags without --"},
		{"DiskSpd with a file before --", diskSettings([]string{"f", "-b4K", "g"}, 1, nil),
			`with DiskSpd's syntax the target file goes after --, got "f" before it`},
		{"verify off the alignment", diskSettings(nil, -1, func(s *DiskSettings) { s.Verify, s.BlockSize, s.Align = true, "8K", "4K" }, "block-size", "align"),
			""},
	}
	for _, c := range cases {
		d, err := c.s.Spec()
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if d != nil || !agerr.IsBadInput(err) || err.Error() != c.want {
			t.Errorf("%s: spec %v, error\n%v\nwant bad input\n%s", c.name, d, err, c.want)
		}
	}
}

// The settings make the steps asked for: a preset under the flags given, a list swept,
// DiskSpd's syntax with agbench's own sweep, and the file's size with its header.
func TestDiskSettingsSpec(t *testing.T) {
	d, err := diskSettings([]string{"f.dat"}, -1, func(s *DiskSettings) { s.Preset, s.QD, s.Size, s.Keep = "oltp", "1,4", "8M", true }, "preset", "qd", "size").Spec()
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := diskio.LookupPreset("oltp")
	w := diskio.DefaultWorkload()
	pr.Apply(&w)
	if d.Path != "f.dat" || !d.Keep || d.Size != 8<<20 || d.Prepare.Size != 8<<20+diskio.HeaderSize || len(d.Steps) != 2 ||
		d.Sweep.Key != "qd" || d.Steps[0].QD != 1 || d.Steps[1].QD != 4 || !slices.Equal(d.Steps[1].BlockSizes, w.BlockSizes) || d.Steps[1].Random != w.Random {
		t.Errorf("preset with a qd list: %+v", d)
	}
	d, err = diskSettings(nil, -1, nil).Spec()
	if err != nil || d.Path != "agbench-disk.dat" || len(d.Steps) != 1 || d.Steps[0].MaxBlock() != 128<<10 || d.Prepare.Size != 0 || d.Prepare.MinRegion != 128<<10 {
		t.Errorf("defaults: %+v, %v", d, err)
	}
	d, err = diskSettings([]string{"-b4K", "-o2", "-c8M", "-r", "t.dat"}, 0, func(s *DiskSettings) { s.Sweep = "threads=1,2" }, "sweep").Spec()
	if err != nil || d.Path != "t.dat" || d.DiskSpd == nil || d.Size != 8<<20 || len(d.Steps) != 2 || d.Steps[1].Threads != 2 || d.Steps[1].QD != 2 || !d.Steps[0].Random {
		t.Errorf("DiskSpd: %+v, %v", d, err)
	}
}

func seedSettings(set func(*SeedSettings)) *SeedSettings {
	s := &SeedSettings{Cluster: "lab", Method: seed.MethodDirect, Compress: "none", LagThreshold: "16M",
		CatchUpTimeout: seed.DefaultCatchUpTimeout, Repeat: 1}
	if set != nil {
		set(s)
	}
	return s
}

// Every refused seeding is bad input naming its flag, every problem at once, without
// reading the cluster.
func TestSeedSettingsRefused(t *testing.T) {
	cases := []struct {
		name string
		set  func(*SeedSettings)
		want []string
	}{
		{"compression", func(s *SeedSettings) { s.Compress = "brotli" }, []string{"--compress"}},
		{"method", func(s *SeedSettings) { s.Method = "copy" }, []string{`--method "copy": want direct or backup-restore`}},
		{"max rate", func(s *SeedSettings) { s.MaxRate = "fast" }, []string{"--max-rate: "}},
		{"lag", func(s *SeedSettings) { s.LagThreshold = "x" }, []string{"--lag-threshold: "}},
		{"sync and async", func(s *SeedSettings) { s.Sync, s.Async = true, true }, []string{"--sync and --async: choose one"}},
		{"catch-up", func(s *SeedSettings) { s.CatchUpTimeout = 0 }, []string{"--catchup-timeout 0s: must be positive"}},
		{"init size", func(s *SeedSettings) { s.InitSize = "1M" }, []string{`--init-size "1M": want a size of 16M or more (e.g. 2G)`}},
		{"init only", func(s *SeedSettings) { s.InitOnly = true }, []string{"--init-only needs --init-size"}},
		{"repeat alone", func(s *SeedSettings) { s.Repeat = 3 }, []string{"--repeat needs --compare"}},
		{"repeat bound", func(s *SeedSettings) { s.Repeat, s.Compare = 21, []string{"method=direct"} }, []string{"--repeat 21: want 1 to 20"}},
		{"compare key", func(s *SeedSettings) { s.Compare = []string{"speed=1,2"} }, []string{"--compare"}},
		{"cluster name", func(s *SeedSettings) { s.Cluster = "no/such" }, []string{"no/such"}},
		{"all at once", func(s *SeedSettings) { s.Compress, s.Method, s.MaxRate = "brotli", "copy", "fast" },
			[]string{"--compress", "--max-rate", "--method"}},
	}
	for _, c := range cases {
		sp, err := seedSettings(c.set).Spec()
		if sp != nil || !agerr.IsBadInput(err) {
			t.Errorf("%s: spec %v, error %v; want bad input", c.name, sp, err)
			continue
		}
		at := 0
		for _, w := range c.want {
			i := strings.Index(err.Error()[at:], w)
			if i < 0 {
				t.Errorf("%s: %q does not say %q (in this order)", c.name, err, w)
				break
			}
			at += i
		}
	}
}

// A seeding spec carries the options read, the variants compared and the database's size.
func TestSeedSettingsSpec(t *testing.T) {
	sp, err := seedSettings(func(s *SeedSettings) {
		s.Compress, s.MaxRate, s.InitSize, s.Compare, s.Repeat = "zstd:3", "10M", "32M", []string{"method=direct,backup-restore"}, 2
	}).Spec()
	if err != nil {
		t.Fatal(err)
	}
	if sp.Options.Compress.String() != "zstd:3" || sp.Options.MaxRate != 10<<20 || sp.Options.LagThreshold != 16<<20 || sp.InitSize != 32<<20 ||
		sp.Repeat != 2 || !slices.Equal(seed.Labels(sp.All()), []string{"direct/zstd:3", "backup-restore/zstd:3"}) {
		t.Errorf("spec: %+v", sp)
	}
}

// The read-ahead settings fill the query bounds from the rows, take --out for --results,
// and refuse every bad choice at once.
func TestReadaheadSettingsSpec(t *testing.T) {
	s := &ReadaheadSettings{Results: "results", Out: "old", Config: readahead.Config{Rows: 2000, Repeat: 1, Queries: readahead.QueryNames,
		Device: readahead.DeviceNone, ReadAheadKB: 128, IOConcurrency: 1}}
	r, err := s.Spec()
	if err != nil || s.Results != "old" || r.Config.RangeIDs != 2000 || r.Config.JoinIDs != readahead.DefaultJoinIDs || r.Topo != nil {
		t.Errorf("spec %+v, results %q, error %v", r, s.Results, err)
	}
	s = &ReadaheadSettings{Cluster: "lab", PGBin: "/x", Config: readahead.Config{Rows: 10, Device: "tape", ReadAheadKB: 128, IOConcurrency: 1}}
	r, err = s.Spec()
	if r != nil || !agerr.IsBadInput(err) {
		t.Fatalf("bad settings: %v, %v", r, err)
	}
	for _, w := range []string{"--rows 10", "--repeat 0", "--device", "--cluster and --pg-bin", "--results: want a folder"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
}
