package result

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// withSections is a result with every section this package declares, as its writers fill them.
func withSections(t *testing.T) *Result {
	t.Helper()
	r := sample(t)
	r.Steps = append(r.Steps, r.Steps[0], r.Steps[0], r.Steps[0])
	for i := range r.Steps {
		r.Steps[i].Index = i
		r.Steps[i].Extra = nil
	}
	t0 := time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)
	sets := []error{
		r.SetExtra(ExtraDisk, DiskRun{Device: "vdb"}),
		r.SetExtra(ExtraReadahead, ReadaheadRun{
			Conditions: ReadaheadConditions{ServerVersion: "17.2", VersionNum: 170002, Relations: map[string]int64{"t": 8192}},
			Table: []ReadaheadRow{{Query: "range", Title: "range scan", Node: "Index Scan",
				Off: ReadaheadFigures{Runs: 3, ElapsedMs: 90, Read: 1000, NodeOK: true}, On: ReadaheadFigures{Runs: 3, ElapsedMs: 30}, Ratio: 3}}}),
		r.Steps[1].SetExtra(ExtraSeed, Seeding{Method: "direct", Started: t0, Ended: t0.Add(time.Minute),
			Phases: []SeedPhase{{Name: "transfer", Seconds: 42, DiskWriteBytes: 1 << 30}}, TotalSeconds: 60, WireBytes: 1 << 29, CompressionRatio: 2}),
		r.Steps[3].SetExtra(ExtraSample, SampleStep{Nodes: map[string]SampleNode{"node1": {
			Info:     PGNodeInfo{Name: "node1", VersionNum: 170002, SharedBuffersBytes: 128 << 20},
			TopWaits: []WaitEvent{{Type: "Lock", Event: "tuple", Class: WaitLock, Sessions: 2.5}}, WaitSamples: 100}}}),
		r.Steps[2].SetExtra(ExtraHosts, HostsStep{Nodes: map[string]HostSource{
			"pg1": {Source: "http://10.0.0.5:9100/metrics", Scrapes: 12, Failed: 1, Missing: map[string]string{HostRunQueue: "node_procs_running not exported"}},
			"pg2": {Source: "http://10.0.0.6:9100/metrics", Scrapes: 12, Failed: 12, Absent: "connection refused"}}}),
	}
	if err := errors.Join(sets...); err != nil {
		t.Fatal(err)
	}
	return r
}

// Every section goes through a result file and comes back as it was written.
func TestExtraSectionsRoundTrip(t *testing.T) {
	r := withSections(t)
	path, err := Write(t.TempDir(), r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	same := func(name string, read func(*Result) (any, error)) {
		t.Helper()
		w, werr := read(r)
		g, gerr := read(got)
		if werr != nil || gerr != nil || reflect.ValueOf(g).IsNil() || !reflect.DeepEqual(g, w) {
			t.Errorf("%s: read back %+v (%v), written %+v (%v)", name, g, gerr, w, werr)
		}
	}
	same("disk", func(r *Result) (any, error) { return r.DiskRun() })
	same("readahead", func(r *Result) (any, error) { return r.ReadaheadRun() })
	same("seed", func(r *Result) (any, error) { return r.Steps[1].Seeding() })
	same("sample", func(r *Result) (any, error) { return r.Steps[3].Sample() })
	same("hosts", func(r *Result) (any, error) { return r.Steps[2].Hosts() })
	// Absent (or null) is nil without an error: never an empty section.
	got.Steps[0].Extra = map[string]json.RawMessage{ExtraSample: json.RawMessage("null")}
	if s, err := got.Steps[0].Sample(); s != nil || err != nil {
		t.Errorf("null section: %+v %v", s, err)
	}
	if s, err := got.Steps[2].Seeding(); s != nil || err != nil {
		t.Errorf("absent section: %+v %v", s, err)
	}
}

// A section that does not decode makes reading fail with an error that names the step and
// the section, never a result with that part empty.
func TestCorruptSectionIsNamed(t *testing.T) {
	for _, c := range []struct {
		step      int // RunLevel for the run's own Extra
		key, json string
		want      string
	}{
		{3, ExtraSample, `{"nodes": {"node1": {"top_waits": "Lock:tuple"}}}`, `step 3 extra "sample": json: cannot unmarshal string`},
		{1, ExtraSeed, `{"phases": 42}`, `step 1 extra "seed": json: cannot unmarshal number`},
		{2, ExtraHosts, `{"nodes": {"pg1": {"scrapes": "twelve"}}}`, `step 2 extra "hosts": json: cannot unmarshal string`},
		{RunLevel, ExtraDisk, `{"device": 8}`, `extra "disk": json: cannot unmarshal number`},
		{RunLevel, ExtraReadahead, `{"table": {"query": "range"}}`, `extra "readahead": json: cannot unmarshal object`},
	} {
		t.Run(c.key, func(t *testing.T) {
			r := withSections(t)
			m := &r.Extra
			if c.step != RunLevel {
				m = &r.Steps[c.step].Extra
			}
			(*m)[c.key] = json.RawMessage(c.json)
			dir := t.TempDir()
			path, err := Write(dir, r)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Read(dir)
			if err == nil || !strings.HasPrefix(err.Error(), path+": "+c.want) {
				t.Fatalf("Read: %v\nwant %s: %s...", err, path, c.want)
			}
			var xe *ExtraError
			if !errors.As(err, &xe) || xe.Step != c.step || xe.Key != c.key {
				t.Fatalf("error %#v does not name step %d section %q", xe, c.step, c.key)
			}
		})
	}
}

// Sections of other keys belong to their owners: reading leaves them alone.
func TestOtherSectionsAreNotChecked(t *testing.T) {
	r := withSections(t)
	r.Extra["tool"] = json.RawMessage(`{"device": 8}`)
	r.Steps[0].Extra = map[string]json.RawMessage{"tool": json.RawMessage(`[1, "x"]`)}
	dir := t.TempDir()
	if _, err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}
	var v []any
	if ok, err := r.Steps[0].ExtraOf("tool", &v); !ok || err != nil || len(v) != 2 {
		t.Fatalf("ExtraOf: %v %v %v", v, ok, err)
	}
	var n int
	if ok, err := r.Steps[0].ExtraOf("tool", &n); ok || err == nil || err.Error() != `step 0 extra "tool": json: cannot unmarshal array into Go value of type int` {
		t.Fatalf("ExtraOf into the wrong type: %v %v", ok, err)
	}
}

// A value JSON cannot hold is an error naming the section, and the old section stays.
func TestSetExtraNamesWhatItCannotWrite(t *testing.T) {
	st := Step{Index: 2, Extra: map[string]json.RawMessage{ExtraSeed: json.RawMessage(`{"method":"direct"}`)}}
	err := st.SetExtra(ExtraSeed, Seeding{CompressionRatio: posInf()})
	if err == nil || !strings.HasPrefix(err.Error(), `step 2 extra "seed": json: unsupported value: +Inf`) {
		t.Fatalf("SetExtra: %v", err)
	}
	if s, err := st.Seeding(); err != nil || s.Method != "direct" {
		t.Fatalf("old section lost: %+v %v", s, err)
	}
}

func posInf() float64 {
	var zero float64
	return 1 / zero
}

// The file on disk still holds the sections under the keys and JSON names they always had.
func TestExtraSectionsKeepTheirJSONNames(t *testing.T) {
	r := withSections(t)
	path, err := Write(t.TempDir(), r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"disk": {`, `"device": "vdb"`, `"readahead": {`, `"conditions": {`, `"shared_read": 1000`,
		`"seed": {`, `"phases": [`, `"total_seconds": 60`, `"sample": {`, `"top_waits": [`, `"wait_samples": 100`, `"shared_buffers_bytes": 134217728`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("result file lacks %s", want)
		}
	}
}

// Wait events alike in sessions come in one order whatever order they were found in (the
// samplers' top waits and the analysis's merge of them).
func TestSortWaitEventsOneOrder(t *testing.T) {
	want := []WaitEvent{{Type: "Lock", Event: "relation", Class: "lock", Sessions: 2},
		{Type: "", Event: "", Class: "client", Sessions: 1}, {Type: "", Event: "", Class: "cpu", Sessions: 1},
		{Type: "IO", Event: "WALSync", Class: "log", Sessions: 1}}
	for _, perm := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}, {1, 3, 0, 2}} {
		var got []WaitEvent
		for _, i := range perm {
			got = append(got, want[i])
		}
		SortWaitEvents(got)
		if !slices.Equal(got, want) {
			t.Errorf("from %v: %+v", perm, got)
		}
	}
}

// A figure of a node's host is absent for the host's reason when none was read, else for
// its own.
func TestHostSourceWhy(t *testing.T) {
	h := HostSource{Missing: map[string]string{HostRunQueue: "node_procs_running not exported"}}
	if got := h.Why(HostRunQueue); got != "node_procs_running not exported" {
		t.Errorf("run queue: %q", got)
	}
	if got := h.Why(HostCPUBusy); got != "" {
		t.Errorf("a figure read: %q", got)
	}
	h.Absent = "connection refused"
	if got := h.Why(HostCPUBusy); got != "connection refused" {
		t.Errorf("a host not read: %q", got)
	}
}

// A drill's Patroni section, as results written before its timing was the type live state
// declares (testdata/older/drill-before-sync-gap.json's, with strict mode added), reads the
// same figures and writes back the same bytes.
func TestDrillPatroniReadsAsWritten(t *testing.T) {
	const in = `{"ttl":10,"loop_wait":2,"retry_timeout":4,"synchronous_mode":true,"synchronous_mode_strict":false,"kill":"both"}`
	var p DrillPatroni
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if p.TTL != 10 || p.LoopWait != 2 || p.RetryTimeout != 4 || !p.SynchronousMode || p.SynchronousModeStrict == nil || *p.SynchronousModeStrict || p.Kill != "both" {
		t.Errorf("read %+v", p)
	}
	out, err := json.Marshal(p)
	if err != nil || string(out) != in {
		t.Errorf("written back as %s (%v), want %s", out, err, in)
	}
}
