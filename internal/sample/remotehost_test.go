package sample

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/hostmetrics"
	"github.com/agbench/agbench/internal/hostmetrics/hostmetricstest"
	"github.com/agbench/agbench/internal/result"
)

// waitReads waits until every node of h has been read at least n times, failed ones too.
func waitReads(t *testing.T, h *RemoteHostStep, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		h.mu.Lock()
		least := n
		for _, x := range h.nodes {
			least = min(least, x.scrapes)
		}
		h.mu.Unlock()
		if least >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d reads in a minute", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startedStep makes a sampler of the hosts, reading every interval, and starts its window
// now.
func startedStep(t *testing.T, interval time.Duration, hosts ...RemoteHost) (*RemoteHostStep, *result.Step) {
	t.Helper()
	h, err := NewRemoteHostStep(hosts, interval)
	if err != nil {
		t.Fatal(err)
	}
	st := &result.Step{Window: result.Window{Start: time.Now()}}
	if err := h.Start(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return h, st
}

func exporterHost(t *testing.T, node string) (*hostmetricstest.Process, RemoteHost) {
	ex := hostmetricstest.StartExporter(t)
	src, err := hostmetrics.NewExporter(ex.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ex, RemoteHost{Node: node, Source: src}
}

func TestRemoteHostStepWindow(t *testing.T) {
	t.Parallel()
	_, a := exporterHost(t, "a")
	_, b := exporterHost(t, "b.2")
	h, st := startedStep(t, 100*time.Millisecond, a, b)
	waitReads(t, h, 4)
	if err := h.Stop(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	sec, err := st.Hosts()
	if err != nil || sec == nil {
		t.Fatalf("hosts section: %v %v", sec, err)
	}
	for _, node := range []string{"a", "b.2"} {
		src := sec.Nodes[node]
		if src.Scrapes < 5 || src.Failed != 0 || src.Absent != "" || len(src.Missing) != 0 || !strings.HasSuffix(src.Source, "/metrics") {
			t.Errorf("%s: %+v", node, src)
		}
		// Its machine is named as uname names this one (the exporter is on it).
		if host, _ := os.Hostname(); src.Nodename != host || src.Machine == "" {
			t.Errorf("%s: machine %q %q, want %q", node, src.Nodename, src.Machine, host)
		}
		for _, fig := range []string{result.HostCPUBusy, result.HostCPUs, result.HostMemAvailable, result.HostNetRxBPS, result.HostScrapeOffsetS} {
			name := result.HostName(node, fig)
			if _, ok := st.Counters[name]; !ok {
				t.Errorf("no window figure %s", name)
			}
		}
		busy := st.Series[result.HostName(node, result.HostCPUBusy)]
		if len(busy.T) < 3 {
			t.Errorf("%s: %d points of CPU busy", node, len(busy.T))
		}
	}
	if len(st.Warnings) != 0 {
		t.Errorf("warnings: %v", st.Warnings)
	}
}

func TestRemoteHostStepExporterKilledMidWindow(t *testing.T) {
	t.Parallel()
	ex, a := exporterHost(t, "a")
	_, b := exporterHost(t, "b")
	h, st := startedStep(t, 100*time.Millisecond, a, b)
	waitReads(t, h, 3)
	ex.Stop()
	killed := time.Since(st.Window.Start).Seconds()
	h.mu.Lock()
	before := h.nodes[0].scrapes
	h.mu.Unlock()
	waitReads(t, h, before+2)
	if err := h.Stop(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	sec, _ := st.Hosts()
	src := sec.Nodes["a"]
	if src.Failed < 2 || !strings.Contains(src.Absent, "close failed") || !strings.Contains(src.Absent, "connection refused") {
		t.Errorf("killed exporter: %+v", src)
	}
	if why := src.Why(result.HostCPUBusy); why == "" {
		t.Error("no reason for the killed host's CPU busy")
	}
	for name := range st.Counters {
		if n, _, ok := result.ParseHostName(name); ok && n == "a" {
			t.Errorf("window figure %s of a host whose exporter was killed", name)
		}
	}
	busy := st.Series[result.HostName("a", result.HostCPUBusy)]
	if len(busy.T) == 0 || busy.T[len(busy.T)-1] > killed {
		t.Errorf("series of the killed host: %v (killed at %.2f s)", busy.T, killed)
	}
	if other := sec.Nodes["b"]; other.Absent != "" || other.Failed != 0 {
		t.Errorf("the other host: %+v", other)
	}
	if _, ok := st.Counters[result.HostName("b", result.HostCPUBusy)]; !ok {
		t.Error("the other host's window figures are gone too")
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "host figures of a:") {
		t.Errorf("warnings: %v", st.Warnings)
	}
}

// stopUnhung closes the window of h, failing the test if the close hangs on a frozen
// source: two minutes bound a hang, not a timing (a read's own bound is 5 s).
func stopUnhung(t *testing.T, h *RemoteHostStep, st *result.Step) {
	t.Helper()
	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop(context.Background(), st) }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the window's close waited on a frozen source for 2 minutes")
	}
}

// An exporter frozen mid-window (SIGSTOP: its port still takes connections, nothing
// answers) is a host that stopped answering, not one read late for ever: each read fails
// after its bound saying so, the window's close is not waited on past it, and the host's
// figures are absent with that reason while the other host's stay.
func TestRemoteHostStepExporterFrozenMidWindow(t *testing.T) {
	t.Parallel()
	ex, a := exporterHost(t, "a")
	_, b := exporterHost(t, "b")
	h, st := startedStep(t, 100*time.Millisecond, a, b)
	waitReads(t, h, 3)
	ex.Freeze(t)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		h.mu.Lock()
		failed := h.nodes[0].failed
		h.mu.Unlock()
		if failed > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no read of the frozen exporter failed in a minute")
		}
	}
	stopUnhung(t, h, st)
	sec, _ := st.Hosts()
	src := sec.Nodes["a"]
	want := ex.URL + " did not answer within 5.0 s"
	if src.Failed < 2 || !strings.Contains(src.Absent, "close failed") || !strings.Contains(src.Absent, want) {
		t.Errorf("frozen exporter: %+v; want its close failed, %q", src, want)
	}
	for name := range st.Counters {
		if n, _, ok := result.ParseHostName(name); ok && n == "a" {
			t.Errorf("window figure %s of a host whose exporter froze", name)
		}
	}
	if other := sec.Nodes["b"]; other.Absent != "" || other.Failed != 0 {
		t.Errorf("the other host: %+v", other)
	}
}

func TestRemoteHostStepExporterDownAtOpen(t *testing.T) {
	t.Parallel()
	ex, a := exporterHost(t, "a")
	ex.Stop()
	h, st := startedStep(t, 100*time.Millisecond, a)
	waitReads(t, h, 2)
	if err := h.Stop(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	sec, _ := st.Hosts()
	if src := sec.Nodes["a"]; src.Failed != src.Scrapes || !strings.Contains(src.Absent, "every read of "+ex.URL+" failed") {
		t.Errorf("exporter down: %+v", src)
	}
	if len(st.Counters) != 0 || len(st.Series) != 0 {
		t.Errorf("figures of a host never read: %v %v", st.Counters, st.Series)
	}
}

func prometheusHost(t *testing.T, node string) (*hostmetricstest.Process, RemoteHost) {
	t.Helper()
	ex := hostmetricstest.StartExporter(t)
	prom := hostmetricstest.StartPrometheus(t, ex.Addr)
	src, err := hostmetrics.NewPrometheus(context.Background(), prom.URL, "", ex.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return ex, RemoteHost{Node: node, Source: src}
}

// A window shorter than the server's scrape interval (1 s) has its scrapes nearest the open
// and the close at least an interval apart, mostly outside it: its figures are absent with
// that reason, never made of them. The window's close is read at the server's first scrape
// after it.
func TestRemoteHostStepWindowTooShortForTheScrapes(t *testing.T) {
	t.Parallel()
	_, a := prometheusHost(t, "a")
	h, st := startedStep(t, time.Second, a)
	st.Window.End = st.Window.Start.Add(200 * time.Millisecond)
	if err := h.Stop(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	sec, _ := st.Hosts()
	src := sec.Nodes["a"]
	if src.Span == nil || src.Span.Start.After(st.Window.Start) || src.Span.End.Before(st.Window.End) {
		t.Fatalf("the readings' span %+v does not cover the window %+v", src.Span, st.Window)
	}
	t.Logf("window %.2f s, scrapes %.2f s apart: %s", st.Window.Seconds(), src.Span.Seconds(), src.Absent)
	if !strings.Contains(src.Absent, "is too short for how the host was read") {
		t.Errorf("a 0.2 s window read through 1 s scrapes: %+v", src)
	}
	for name := range st.Counters {
		t.Errorf("window figure %s of a window too short for the scrapes", name)
	}
}

// An exporter that went away mid-window, read through Prometheus: the window's close is the
// server's failed scrape (up 0) with its error, naming the series; the host's figures are
// absent, not those of its last good scrape; the other host's stay.
func TestRemoteHostStepPrometheusExporterDownAtClose(t *testing.T) {
	t.Parallel()
	ex, a := prometheusHost(t, "a")
	_, b := prometheusHost(t, "b")
	h, st := startedStep(t, 100*time.Millisecond, a, b)
	waitReads(t, h, 3)
	ex.Stop()
	// The window closes a second after the exporter's end: the server's scrapes from then
	// on began after it was gone (its clock is measured to well within that). It lasts 3 s
	// at least, so that the other host's scrapes around it are mostly of the window.
	st.Window.End = time.Now().Add(time.Second)
	if least := st.Window.Start.Add(3 * time.Second); st.Window.End.Before(least) {
		st.Window.End = least
	}
	if err := h.Stop(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	sec, _ := st.Hosts()
	src := sec.Nodes["a"]
	for _, want := range []string{"the read at the window's close failed", `instance="` + ex.Addr + `"`, "failed (up 0)", "connection refused"} {
		if !strings.Contains(src.Absent, want) {
			t.Errorf("exporter down at the close: %q lacks %q", src.Absent, want)
		}
	}
	for name := range st.Counters {
		if n, _, ok := result.ParseHostName(name); ok && n == "a" {
			t.Errorf("window figure %s of a host whose exporter went away", name)
		}
	}
	if other := sec.Nodes["b"]; other.Absent != "" || other.Failed != 0 {
		t.Errorf("the other host: %+v", other)
	}
	if _, ok := st.Counters[result.HostName("b", result.HostCPUBusy)]; !ok {
		t.Error("the other host's window figures are gone too")
	}
}

// A Prometheus server frozen mid-window: the window's close asks it and gets no answer;
// the read fails after its bound, saying the server did not answer, and the host's
// figures are absent, not those of the server's last answer.
func TestRemoteHostStepPrometheusFrozenAtClose(t *testing.T) {
	t.Parallel()
	ex := hostmetricstest.StartExporter(t)
	prom := hostmetricstest.StartPrometheus(t, ex.Addr)
	src, err := hostmetrics.NewPrometheus(context.Background(), prom.URL, "", ex.Addr)
	if err != nil {
		t.Fatal(err)
	}
	h, st := startedStep(t, 100*time.Millisecond, RemoteHost{Node: "a", Source: src})
	waitReads(t, h, 3)
	prom.Freeze(t)
	st.Window.End = time.Now()
	stopUnhung(t, h, st)
	sec, _ := st.Hosts()
	got := sec.Nodes["a"]
	if want := prom.URL + " did not answer within 5.0 s"; !strings.Contains(got.Absent, "close failed") || !strings.Contains(got.Absent, want) {
		t.Errorf("frozen server: %+v; want its close failed, %q", got, want)
	}
	for name := range st.Counters {
		t.Errorf("window figure %s read through a frozen server", name)
	}
}
