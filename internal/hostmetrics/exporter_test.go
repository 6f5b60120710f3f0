package hostmetrics_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/hostmetrics"
	"github.com/agbench/agbench/internal/hostmetrics/hostmetricstest"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
)

// readUntilMoved reads src until its CPU counters moved since first (the exporter reads
// /proc/stat, whose ticks are 10 ms: readings close together may be equal).
func readUntilMoved(t *testing.T, src hostmetrics.Source, first hostmetrics.Reading) hostmetrics.Reading {
	t.Helper()
	for i := 0; ; i++ {
		r, err := src.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.CPUMode["idle"]+r.CPUMode["user"]+r.CPUMode["system"] != first.CPUMode["idle"]+first.CPUMode["user"]+first.CPUMode["system"] {
			return r
		}
		if i > 10000 {
			t.Fatal("the exporter's CPU counters never moved")
		}
	}
}

func TestExporterFiguresOfThisMachine(t *testing.T) {
	t.Parallel()
	ex := hostmetricstest.StartExporter(t)
	src, err := hostmetrics.NewExporter("http://"+ex.Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if src.String() != ex.URL {
		t.Errorf("URL without a path read as %s, want %s", src.String(), ex.URL)
	}
	first, err := src.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f := hostmetrics.Between("here", first, readUntilMoved(t, src, first))
	h := func(fig string) string { return result.HostName("here", fig) }
	stat, err := proc.Host.CPUStat()
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Values[h(result.HostCPUs)]; got != float64(len(stat.CPUs)) {
		t.Errorf("CPUs %v, /proc/stat has %d", got, len(stat.CPUs))
	}
	mem, err := proc.Host.Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Values[h(result.HostMemTotal)]; got != float64(mem.TotalBytes) {
		t.Errorf("MemTotal %v, /proc/meminfo says %d", got, mem.TotalBytes)
	}
	// The exporter runs on agbench's clock: the offset measured is the scrape's own
	// timing, well under a second even on a busy machine.
	if off, ok := f.Values[h(result.HostScrapeOffsetS)]; !ok || math.Abs(off) > 0.5 {
		t.Errorf("clock offset %v (measured %v) of an exporter on this machine", off, ok)
	}
	for _, fig := range []string{result.HostCPUBusy, result.HostCPUPressure, result.HostRunQueue, result.HostMemAvailable, result.HostMemPageCache, result.HostNetErrors} {
		if _, ok := f.Values[h(fig)]; !ok {
			t.Errorf("%s absent: %s", fig, f.Absent[h(fig)])
		}
	}
	devices := 0
	for name := range f.Values {
		if _, _, fig, ok := result.ParseHostDiskName(name); ok && fig == result.DiskIOPS {
			devices++
		}
	}
	if devices == 0 {
		t.Errorf("no device figures: %v", f.Absent)
	}
	if len(f.Absent) > 0 {
		t.Errorf("figures absent from a full exporter: %v", f.Absent)
	}
}

func TestExporterURLThatIsNotAnExporter(t *testing.T) {
	t.Parallel()
	ex := hostmetricstest.StartExporter(t)
	// The exporter's own landing page answers 200 with HTML, not its figures.
	src, err := hostmetrics.NewExporter("http://"+ex.Addr+"/index.html", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Read(context.Background())
	if err == nil || !(errors.Is(err, hostmetrics.ErrNotExporter) || strings.Contains(err.Error(), "not the exposition format")) {
		t.Fatalf("read the landing page as figures: %v", err)
	}
	ex.Stop()
	if _, err := src.Read(context.Background()); err == nil {
		t.Fatal("read a stopped exporter")
	}
	for _, bad := range []string{"127.0.0.1:9100", "ftp://h/", "http://user:pw@h:9100/", "http://"} {
		if _, err := hostmetrics.ExporterURL(bad); err == nil {
			t.Errorf("ExporterURL(%q) took it", bad)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("ExporterURL(%q): the password in the error: %v", bad, err)
		}
	}
}
