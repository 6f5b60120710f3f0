package hosts

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/agbench/agbench/internal/hostmetrics"
	"github.com/agbench/agbench/internal/result"
)

// A second reader of the exporters a Prometheus server scrapes: the test's own, which reads
// them directly and keeps when each read began and ended, to compare the figures agbench
// made of the server's scrapes with the exporter's counters at those moments.

// directPace is how often the test reads an exporter itself: the closer its reads, the
// tighter the bounds of compareWithDirect (a read takes milliseconds).
const directPace = 100 * time.Millisecond

// directRead is one of the test's reads of an exporter: the exporter read the host's
// counters between sent and got.
type directRead struct {
	sent, got time.Time
	r         hostmetrics.Reading
}

// directReader reads one exporter until stopped.
type directReader struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	reads  []directRead
	first  chan struct{} // closed at the first read that worked
}

// readDirectly reads the exporter at url every directPace until stop (or the test's end);
// reads that fail (an exporter stopped) are left out.
func readDirectly(t *testing.T, url string) *directReader {
	t.Helper()
	src, err := hostmetrics.NewExporter(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &directReader{cancel: cancel, done: make(chan struct{}), first: make(chan struct{})}
	go func() {
		defer close(d.done)
		for {
			sent := time.Now()
			r, err := src.Read(ctx)
			if err == nil {
				d.mu.Lock()
				d.reads = append(d.reads, directRead{sent: sent, got: time.Now(), r: r})
				if len(d.reads) == 1 {
					close(d.first)
				}
				d.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(directPace):
			}
		}
	}()
	t.Cleanup(func() { d.stop() })
	return d
}

// waitFirst waits until the reader has read the exporter once: a scrape that begins after
// it has a read of the test's before it.
func (d *directReader) waitFirst(t *testing.T) {
	t.Helper()
	select {
	case <-d.first:
	case <-time.After(time.Minute):
		t.Fatal("the test could not read the exporter in a minute")
	}
}

// waitReadAfter waits until the reader has read the exporter once more, beginning at or
// after at.
func (d *directReader) waitReadAfter(t *testing.T, at time.Time) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		d.mu.Lock()
		n := len(d.reads)
		done := n > 0 && !d.reads[n-1].sent.Before(at)
		d.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the test did not read the exporter after %v within a minute", at)
		}
		time.Sleep(directPace / 2)
	}
}

// stop ends the reads and gives them, oldest first; stopping again gives them again.
func (d *directReader) stop() []directRead {
	d.cancel()
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reads
}

// serverScrape is one of the server's scrapes of a target: when it began (its samples'
// time) and how long it took (scrape_duration_seconds).
type serverScrape struct {
	at  time.Time
	dur time.Duration
}

// scrapesOf asks the server at url for its scrapes of each target in the last ten minutes,
// by the target's instance.
func scrapesOf(t *testing.T, url string) map[string][]serverScrape {
	t.Helper()
	c, err := api.NewClient(api.Config{Address: url})
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := v1.NewAPI(c).Query(context.Background(), "scrape_duration_seconds[10m]", time.Now())
	m, ok := v.(model.Matrix)
	if err != nil || !ok {
		t.Fatalf("the server's scrape durations: %v (%v)", err, v)
	}
	out := map[string][]serverScrape{}
	for _, s := range m {
		inst := string(s.Metric["instance"])
		for _, p := range s.Values {
			out[inst] = append(out[inst], serverScrape{at: p.Timestamp.Time(), dur: time.Duration(float64(p.Value) * float64(time.Second))})
		}
	}
	return out
}

// nearest is the scrape that began nearest at, which must be within a quarter of the
// server's 1 s interval (the sampler moved the scrape's time onto agbench's clock by an
// offset it measured; here both clocks are this machine's).
func nearest(t *testing.T, scrapes []serverScrape, at time.Time) serverScrape {
	t.Helper()
	best := -1
	for i, s := range scrapes {
		if best < 0 || absDur(s.at.Sub(at)) < absDur(scrapes[best].at.Sub(at)) {
			best = i
		}
	}
	if best < 0 || absDur(scrapes[best].at.Sub(at)) > 250*time.Millisecond {
		t.Fatalf("no scrape of the server's began near %v", at)
	}
	return scrapes[best]
}

func absDur(d time.Duration) time.Duration { return max(d, -d) }

// scrapeTolerance is how far a scrape's recorded time may be from when it began: the
// server rounds it to the millisecond and aligns it to its interval within 2 ms.
const scrapeTolerance = 5 * time.Millisecond

// bracket are the test's last read that ended before the scrape s began and its first that
// began after s ended: the exporter read the counters s has between their reads.
func bracket(t *testing.T, reads []directRead, s serverScrape) (lo, hi directRead) {
	t.Helper()
	var okLo, okHi bool
	for _, r := range reads {
		if !r.got.After(s.at.Add(-scrapeTolerance)) {
			lo, okLo = r, true
		}
		if !okHi && !r.sent.Before(s.at.Add(s.dur+scrapeTolerance)) {
			hi, okHi = r, true
		}
	}
	if !okLo || !okHi {
		t.Fatalf("the test's reads do not surround the scrape at %v (%d reads)", s.at, len(reads))
	}
	return lo, hi
}

// cpuSeconds are the busy CPU seconds (all modes but idle, iowait and steal, as the figure
// is made) and all CPU seconds from a to b.
func cpuSeconds(a, b hostmetrics.Reading) (busy, all float64) {
	for mode, v := range b.CPUMode {
		d := max(0, v-a.CPUMode[mode])
		all += d
		if mode != "idle" && mode != "iowait" && mode != "steal" {
			busy += d
		}
	}
	return busy, all
}

// deviceOps are dev's completed reads and writes from a to b.
func deviceOps(a, b hostmetrics.Reading, dev string) float64 {
	ops := func(r hostmetrics.Reading) float64 {
		return r.Disks[dev]["node_disk_reads_completed_total"] + r.Disks[dev]["node_disk_writes_completed_total"]
	}
	return max(0, ops(b)-ops(a))
}

// compareWithDirect checks node's CPU busy and each device's IOPS (those with IO) in the step, which agbench made of
// the server's scrapes at the figures' span, against the test's own reads of the same
// exporter around those two scrapes. Every counter only grows, so the scrape's counters lie
// between those of the reads just before it began and just after it ended: the figure must
// lie within the bounds those reads give (busy: at least the busy seconds between the inner
// reads over all seconds between the outer ones, at most the outer busy over the inner all;
// IOPS: the operations between the inner and the outer reads, over the span). That holds
// however late a busy machine runs the test's reads, which only widens the bounds: with
// reads every 100 ms they are a few points (a few %) wide over a window of seconds, so a
// figure within them agrees with the direct reading within 5 points of CPU busy and 5% of
// IOPS; a fixed "within 5%" between two readers that run at moments of their own would
// fail whenever the machine starved one of them near a window's edge. A figure made of
// another scrape than the span says, or carried on from an earlier one, falls outside.
func compareWithDirect(t *testing.T, what string, st *result.Step, node string, scrapes []serverScrape, reads []directRead) {
	t.Helper()
	sec, _ := st.Hosts()
	span := sec.Nodes[node].Span
	if span == nil {
		t.Errorf("%s: %s's figures record no span", what, node)
		return
	}
	a, b := nearest(t, scrapes, span.Start), nearest(t, scrapes, span.End)
	loA, hiA := bracket(t, reads, a)
	loB, hiB := bracket(t, reads, b)

	// CPU counters are /proc/stat's ticks (10 ms a CPU): a tick's slack.
	const slack = 0.01
	inBusy, inAll := cpuSeconds(hiA.r, loB.r)
	outBusy, outAll := cpuSeconds(loA.r, hiB.r)
	low, high := inBusy/outAll, 1.0
	if inAll > 0 {
		high = min(1, outBusy/inAll)
	}
	busy := st.Counters[result.HostName(node, result.HostCPUBusy)]
	directBusy, directAll := cpuSeconds(loA.r, loB.r)
	t.Logf("%s %s: CPU busy through Prometheus %.4f, direct %.4f, within the direct reads' bounds [%.4f, %.4f]; edges %.0f and %.0f ms wide",
		what, node, busy, directBusy/directAll, low, high, hiA.sent.Sub(loA.got).Seconds()*1e3, hiB.sent.Sub(loB.got).Seconds()*1e3)
	if busy < low-slack || busy > high+slack {
		t.Errorf("%s: %s's CPU busy %.4f through Prometheus, outside [%.4f, %.4f] of the exporter's own counters around its scrapes", what, node, busy, low, high)
	}

	compared := 0
	for dev := range hiB.r.Disks {
		if deviceOps(loA.r, hiB.r, dev) > 0 {
			compareIOPS(t, what, st, node, dev, *span, [4]directRead{loA, hiA, loB, hiB})
			compared++
		}
	}
	if compared == 0 {
		t.Errorf("%s: %s: no device had IO, though the test's fio read one", what, node)
	}
}

// compareIOPS checks dev's IOPS over span against the operations the test's reads around
// its edges (lo and hi of the open, lo and hi of the close) give: those between the inner
// reads, at least, and between the outer ones, at most.
func compareIOPS(t *testing.T, what string, st *result.Step, node, dev string, span result.Window, r [4]directRead) {
	t.Helper()
	loA, hiA, loB, hiB := r[0], r[1], r[2], r[3]
	iops, ok := st.Counters[result.HostDiskName(node, dev, result.DiskIOPS)]
	if !ok {
		t.Errorf("%s: %s's device %s had IO but no IOPS figure", what, node, dev)
		return
	}
	inOps, outOps := deviceOps(hiA.r, loB.r, dev), deviceOps(loA.r, hiB.r, dev)
	ops := iops * span.Seconds()
	t.Logf("%s %s: %s IOPS through Prometheus %.2f, direct %.2f, within [%.2f, %.2f]", what, node, dev, iops,
		deviceOps(loA.r, loB.r, dev)/loB.r.At.Sub(loA.r.At).Seconds(), inOps/span.Seconds(), outOps/span.Seconds())
	if ops < inOps-0.5 || ops > outOps+0.5 || math.IsNaN(ops) {
		t.Errorf("%s: %s's %s: %.1f operations through Prometheus, outside [%.0f, %.0f] of the exporter's own counters around its scrapes", what, node, dev, ops, inOps, outOps)
	}
}
