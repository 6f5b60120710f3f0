package diskio

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
)

func TestParseDiskSpdArticleCommand(t *testing.T) {
	// The storage article's single-thread baseline, as written.
	c, err := ParseDiskSpd(strings.Fields(`-d60 -b128K -o1 -t1 -Sh -L -w0 -c1G C:\testfile.dat`))
	if err != nil {
		t.Fatal(err)
	}
	w := c.Workload
	if w.Duration != 60*time.Second || !reflect.DeepEqual(w.BlockSizes, []int64{128 << 10}) || w.QD != 1 || w.Threads != 1 ||
		!w.Direct || !w.Dsync || w.WritePct != 0 || w.Random || c.CreateSize != 1<<30 || c.Path != `C:\testfile.dat` || w.Warmup != 5*time.Second {
		t.Fatalf("parsed %+v", c)
	}
	if err := CheckWorkload(&w); err != nil {
		t.Fatal(err)
	}
}

func TestParseDiskSpdSwitches(t *testing.T) {
	c, err := ParseDiskSpd(strings.Fields("-b8K -o32 -t4 -w30 -r64K -Su -W2 -C1 -d5 -g100i f.dat"))
	if err != nil {
		t.Fatal(err)
	}
	w := c.Workload
	if !w.Random || w.Align != 64<<10 || w.QD != 32 || w.Threads != 4 || w.WritePct != 30 || !w.Direct || w.Dsync ||
		w.Warmup != 2*time.Second || w.Duration != 5*time.Second || w.Rate != 400 {
		t.Fatalf("parsed %+v", w)
	}
	c, err = ParseDiskSpd(strings.Fields("-si -b64K -t2 -g6400 f.dat"))
	if err != nil {
		t.Fatal(err)
	}
	// -g is bytes per ms per thread: 6400 B/ms / 64K x 1000 x 2 threads.
	if !c.Workload.SharedSequential || c.Workload.Direct || c.Workload.Rate != 6400*1000.0/65536*2 {
		t.Fatalf("parsed %+v", c.Workload)
	}
	// DiskSpd's defaults: 64K sequential reads, 2 outstanding, 1 thread, cached, 10 s after 5 s.
	c, _ = ParseDiskSpd([]string{"f.dat"})
	if w := c.Workload; w.BlockSizes[0] != 64<<10 || w.QD != 2 || w.Threads != 1 || w.Direct || w.Duration != 10*time.Second {
		t.Fatalf("defaults %+v", w)
	}
}

func TestParseDiskSpdBadInput(t *testing.T) {
	_, err := ParseDiskSpd(strings.Fields("-b12Q -o0 -t99999 -w150 -x -Sz a.dat b.dat"))
	if err == nil || !agerr.IsBadInput(err) {
		t.Fatalf("want bad input, got %v", err)
	}
	for _, want := range []string{"-b12Q", "-o0", "-t99999", "-w150", "-x", "-Sz", "b.dat"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
	if _, err := ParseDiskSpd([]string{"-b4K"}); err == nil || !strings.Contains(err.Error(), "target") {
		t.Errorf("no target: %v", err)
	}
	if _, err := ParseDiskSpd([]string{"#1"}); err == nil || !strings.Contains(err.Error(), "physical") {
		t.Errorf("physical drive: %v", err)
	}
	if _, err := ParseDiskSpd(strings.Fields("-b4K -s8K f")); err == nil {
		t.Errorf("stride != block size accepted")
	}
}

func FuzzParseDiskSpd(f *testing.F) {
	f.Add("-d60 -b128K -o1 -t1 -Sh -L -w0 -c1G testfile.dat")
	f.Add("-b8K -r -w30 -si -g100i -Suw x")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseDiskSpd(strings.Fields(s))
		if err == nil && (c.Path == "" || len(c.Workload.BlockSizes) != 1) {
			t.Fatalf("accepted %q as %+v", s, c)
		}
	})
}
