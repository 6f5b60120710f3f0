package hostmetrics_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/hostmetrics"
	"github.com/agbench/agbench/internal/hostmetrics/hostmetricstest"
)

// readAfter reads src until its reading is later than t.
func readAfter(t *testing.T, src hostmetrics.Source, after time.Time) hostmetrics.Reading {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := src.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.At.After(after) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no reading after %v in a minute", src, after)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bracketed checks that every counter of mid lies between the same counter of before and
// after: readings of the same exporter at three moments, whichever way they were read.
func bracketed(t *testing.T, before, mid, after hostmetrics.Reading) int {
	t.Helper()
	n := 0
	check := func(what string, b, m, a float64) {
		n++
		if m < b || m > a {
			t.Errorf("%s: %v through Prometheus, not between the direct scrapes' %v and %v", what, m, b, a)
		}
	}
	for mode, v := range mid.CPUMode {
		check("cpu "+mode, before.CPUMode[mode], v, after.CPUMode[mode])
	}
	for dev, c := range mid.Disks {
		for metric, v := range c {
			check(dev+" "+metric, before.Disks[dev][metric], v, after.Disks[dev][metric])
		}
	}
	// Interfaces come and go (other tests' namespaces): those in all three readings.
	for metric, devs := range mid.Net {
		for dev, v := range devs {
			b, ok1 := before.Net[metric][dev]
			a, ok2 := after.Net[metric][dev]
			if ok1 && ok2 {
				check(dev+" "+metric, b, v, a)
			}
		}
	}
	return n
}

// viaPrometheus starts an exporter and a Prometheus server that scrapes it, and reads the
// exporter's host through the server.
func viaPrometheus(t *testing.T) (ex, prom *hostmetricstest.Process, via *hostmetrics.Prometheus) {
	t.Helper()
	ex = hostmetricstest.StartExporter(t)
	prom = hostmetricstest.StartPrometheus(t, ex.Addr)
	via, err := hostmetrics.NewPrometheus(context.Background(), prom.URL, "", ex.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return ex, prom, via
}

func TestPrometheusReadsWhatTheExporterSays(t *testing.T) {
	t.Parallel()
	ex := hostmetricstest.StartExporter(t)
	prom := hostmetricstest.StartPrometheus(t, ex.Addr)
	ctx := context.Background()
	direct, err := hostmetrics.NewExporter(ex.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	via, err := hostmetrics.NewPrometheus(ctx, prom.URL, "", ex.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if got := via.String(); !strings.Contains(got, `instance="`+ex.Addr+`"`) {
		t.Errorf("source named %s", got)
	}
	before, err := direct.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A margin past each reading's midpoint keeps the exporter's read of one apart from the
	// next's: a scrape here takes milliseconds.
	const margin = 500 * time.Millisecond
	mid := readAfter(t, via, before.At.Add(margin))
	after := readAfter(t, direct, mid.At.Add(margin))
	if n := bracketed(t, before, mid, after); n < 10 {
		t.Errorf("only %d counters compared", n)
	}
	if mid.CPUs != before.CPUs || mid.Gauges["node_memory_MemTotal_bytes"] != before.Gauges["node_memory_MemTotal_bytes"] {
		t.Errorf("CPUs %d / %d, MemTotal %v / %v", mid.CPUs, before.CPUs, mid.Gauges["node_memory_MemTotal_bytes"], before.Gauges["node_memory_MemTotal_bytes"])
	}
	// Server and exporter run on agbench's clock: what is left is the scrape's timing.
	if mid.ClockOffset == nil || math.Abs(*mid.ClockOffset) > 0.5 {
		t.Errorf("clock offset through Prometheus: %v", mid.ClockOffset)
	}
	values, err := via.Values(ctx)
	if err != nil || !slices.Equal(values, []string{ex.Addr}) {
		t.Errorf("instances %v, %v", values, err)
	}
}

func TestPrometheusWithoutTheHostsSeries(t *testing.T) {
	t.Parallel()
	ex := hostmetricstest.StartExporter(t)
	prom := hostmetricstest.StartPrometheus(t, ex.Addr)
	ctx := context.Background()
	none, err := hostmetrics.NewPrometheus(ctx, prom.URL, "", "elsewhere:9100")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.Read(ctx); err == nil || !strings.Contains(err.Error(), "has no node_cpu_seconds_total") {
		t.Errorf("read a host the server does not scrape: %v", err)
	}
	other, err := hostmetrics.NewPrometheus(ctx, prom.URL, "job", "node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Read(ctx); err != nil {
		t.Errorf("by another label: %v", err)
	}
	if _, err := hostmetrics.NewPrometheus(ctx, "http://"+ex.Addr, "", ex.Addr); err == nil {
		t.Error("took a node_exporter for a Prometheus server")
	}
	if _, err := hostmetrics.NewPrometheus(ctx, prom.URL, "not-a-label", "x"); err == nil {
		t.Error("took a label name with a dash")
	}
}

// A node_exporter given as a Prometheus server is told in one line: it answers, but not as
// Prometheus's HTTP API, without the JSON parser's account of its page.
func TestPrometheusURLThatIsAnExporter(t *testing.T) {
	t.Parallel()
	ex := hostmetricstest.StartExporter(t)
	_, err := hostmetrics.NewPrometheus(context.Background(), "http://"+ex.Addr, "", "x")
	if !errors.Is(err, hostmetrics.ErrNotPrometheus) {
		t.Fatalf("an exporter taken for a Prometheus server: %v", err)
	}
	if want := "http://" + ex.Addr + ": " + hostmetrics.ErrNotPrometheus.Error(); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// A window's close read through Prometheus is the server's first scrape at or after the
// close, waited for: never its latest before the close, which would leave the window's last
// moments out of the figures.
func TestPrometheusReadAfterWaitsForTheNextScrape(t *testing.T) {
	t.Parallel()
	_, _, via := viaPrometheus(t)
	ctx := context.Background()
	closed := time.Now()
	before, err := via.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after, err := via.ReadAfter(ctx, closed)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("close at %v: latest scrape %.3f s before, first after %.3f s after", closed.Format(time.StampMilli), closed.Sub(before.At).Seconds(), after.At.Sub(closed).Seconds())
	if before.At.After(closed) {
		t.Errorf("the latest scrape at the close (%v) is after it (%v)", before.At, closed)
	}
	if after.At.Before(closed) {
		t.Errorf("ReadAfter(%v) gave the scrape of %v, before it", closed, after.At)
	}
	// The first one after: asked again later, it is the same scrape.
	again, err := via.ReadAfter(ctx, closed)
	if err != nil || !again.At.Equal(after.At) {
		t.Errorf("ReadAfter(%v) again gave %v (%v), first %v", closed, again.At, err, after.At)
	}
}

// An exporter that went away is told through Prometheus as the server's failed scrape (up
// 0) with its error, naming the host's series: ReadAfter waits its bounded time for a
// scrape that works and says the scrapes failed; never the figures of the last scrape that
// worked carried on.
func TestPrometheusExporterDownIsUpZeroWithTheScrapeError(t *testing.T) {
	t.Parallel()
	ex, _, via := viaPrometheus(t)
	ctx := context.Background()
	if _, err := via.Read(ctx); err != nil {
		t.Fatal(err)
	}
	ex.Stop()
	// A second past the exporter's end (the server's clock is measured to well within it):
	// the server's scrapes from then on began after it was gone.
	gone := time.Now().Add(time.Second)
	_, err := via.ReadAfter(ctx, gone)
	for _, want := range []string{"Prometheus's scrape of instance=\"" + ex.Addr + "\"", "failed (up 0)", "connection refused"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadAfter a stopped exporter: %v; want it to say %q", err, want)
		}
	}
	// Read passes over a failed scrape while the last that worked is recent, then says the
	// scrapes fail; it never gives a reading of after the exporter's end.
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := via.Read(ctx)
		if err != nil {
			if !strings.Contains(err.Error(), "failed (up 0)") {
				t.Errorf("Read after the exporter went away: %v", err)
			}
			break
		}
		if r.At.After(gone) {
			t.Fatalf("a reading of %v, after the exporter's end", r.At)
		}
		if time.Now().After(deadline) {
			t.Fatal("Read never said the scrapes of a stopped exporter fail")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A host the server no longer scrapes (its target taken out of the configuration) has
// series that end: Read gives the last scrape while it may still be the present, then says
// the series are stale, never a later reading; ReadAfter waits a bounded time for a scrape
// that does not come and says so.
func TestPrometheusTargetNoLongerScrapedIsStale(t *testing.T) {
	t.Parallel()
	ex, prom, via := viaPrometheus(t)
	ctx := context.Background()
	prom.Rescrape(t)
	dropped := time.Now()
	last, err := via.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := via.ReadAfter(ctx, dropped); err == nil || !strings.Contains(err.Error(), `Prometheus took no scrape of instance="`+ex.Addr+`" in the `) {
		t.Errorf("ReadAfter a target no longer scraped: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := via.Read(ctx)
		if err != nil {
			t.Logf("%.1f s after the target was dropped: %v", time.Since(dropped).Seconds(), err)
			if !strings.Contains(err.Error(), "its series are stale") || !strings.Contains(err.Error(), `instance="`+ex.Addr+`"`) {
				t.Errorf("a target no longer scraped: %v", err)
			}
			break
		}
		if !r.At.Equal(last.At) {
			t.Fatalf("a reading of %v after the target's last scrape at %v", r.At, last.At)
		}
		if time.Now().After(deadline) {
			t.Fatal("the series of a target no longer scraped were never said stale")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A label whose value the series of several targets share (job="node" of two exporters)
// does not choose one host: reading it says so, naming the targets, rather than mixing two
// hosts' scrapes into one's figures.
func TestPrometheusLabelOfSeveralTargets(t *testing.T) {
	t.Parallel()
	ex1, ex2 := hostmetricstest.StartExporter(t), hostmetricstest.StartExporter(t)
	prom := hostmetricstest.StartPrometheus(t, ex1.Addr, ex2.Addr)
	ctx := context.Background()
	both, err := hostmetrics.NewPrometheus(ctx, prom.URL, "job", "node")
	if err != nil {
		t.Fatal(err)
	}
	_, err = both.Read(ctx)
	for _, want := range []string{`the series of job="node" are of 2 scrape targets`, `instance="` + ex1.Addr + `"`, `instance="` + ex2.Addr + `"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("read by a label of two targets: %v; want it to say %s", err, want)
		}
	}
	one, err := hostmetrics.NewPrometheus(ctx, prom.URL, "", ex2.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.Read(ctx); err != nil {
		t.Errorf("one target of two: %v", err)
	}
}

// A server that scrapes seldom (Prometheus scrapes every minute unless told otherwise;
// here every 33 s, past the first look back of 30 s) is read: between two scrapes, a
// source made anew finds the last one (it said "no node_cpu_seconds_total of the host in
// the last 30s"), and one that read before looks back as far as the interval it saw.
func TestPrometheusScrapingSeldomIsRead(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a server's scrapes 33 s apart (make test runs it)")
	}
	t.Parallel()
	ex := hostmetricstest.StartExporter(t)
	prom := hostmetricstest.StartPrometheusEvery(t, 33*time.Second, ex.Addr)
	seen, err := hostmetrics.NewPrometheus(context.Background(), prom.URL, "", ex.Addr)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		fresh, err := hostmetrics.NewPrometheus(context.Background(), prom.URL, "", ex.Addr)
		if err != nil {
			t.Fatal(err)
		}
		r, err := fresh.Read(context.Background())
		if err != nil {
			t.Fatalf("a source made %.0f s into the server's scrapes: %v", time.Since(deadline.Add(-3*time.Minute)).Seconds(), err)
		}
		r2, err := seen.Read(context.Background())
		// The two sources' clock offsets are measured apart: a millisecond or so between them.
		if err != nil || r2.At.Sub(r.At).Abs() > 100*time.Millisecond {
			t.Fatalf("a source that read before: %v at %v, the fresh one's at %v", err, r2.At, r.At)
		}
		if age := time.Since(r.At); age > 31*time.Second {
			if len(r.CPUMode) == 0 {
				t.Fatalf("the last scrape, %.1f s old, has no CPU figures: %+v", age.Seconds(), r)
			}
			t.Logf("read the last scrape, %.1f s old", age.Seconds())
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no moment in 3 minutes with the last scrape over 31 s old")
		}
	}
}
