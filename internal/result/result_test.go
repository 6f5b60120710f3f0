package result

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/agbench/agbench/internal/agerr"
)

func newHDR(t *testing.T, values ...int64) *hdrhistogram.Histogram {
	t.Helper()
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func sample(t *testing.T) *Result {
	t.Helper()
	r := New("stress", "v0.1", []string{"--primary", "host=h password=secret", "--threads", "1,2"})
	lat, err := NewHist(newHDR(t, 100, 200, 300, 5000))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC)
	var tp TimeSeries
	tp.Add(start.Add(time.Second), 120)
	tp.Add(start.Add(2*time.Second), 130)
	r.Steps = append(r.Steps, Step{
		Index: 0, Point: 0, Variant: "routing=on", Params: map[string]string{"threads": "2", "routing": "on"},
		VUs: 2, Iterations: 2, Window: Window{Start: start, End: start.Add(2 * time.Second)},
		Ops:        map[string]*Op{"query": {Count: 4, Rows: 4, Bytes: 64, Latency: lat}},
		Counters:   map[string]float64{"buffer_hits": 12},
		Sessions:   []Sessions{{Node: "node2", InRecovery: true, Count: 2}},
		Client:     ClientCPU{UserSeconds: 0.5, Utilisation: 0.1, PerOpMicros: 125000},
		Throughput: map[string]TimeSeries{"query": tp},
		Series:     map[string]TimeSeries{"pg.lag_bytes": tp},
		Complete:   true,
		Analysis:   json.RawMessage(`{"knee":1}`),
	})
	r.Finish(nil)
	return r
}

func TestWriteReadRoundTrip(t *testing.T) {
	r := sample(t)
	dir := RunDir(t.TempDir(), r.Meta.Started, "tpcc run")
	if !strings.HasSuffix(dir, "-tpcc-run") {
		t.Fatalf("RunDir %q", dir)
	}
	path, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Times lose their monotonic clock reading in JSON; compare through JSON.
	want, _ := json.Marshal(r)
	have, _ := json.Marshal(got)
	if string(want) != string(have) {
		t.Fatalf("round trip differs:\nwant %s\nhave %s", want, have)
	}
	if !got.Complete || got.Steps[0].OpsPerSecond() != 2 {
		t.Fatalf("complete %v, ops/s %v", got.Complete, got.Steps[0].OpsPerSecond())
	}
	h, err := got.Steps[0].Ops["query"].Latency.Histogram()
	if err != nil || h.TotalCount() != 4 || h.Max() < 4990 {
		t.Fatalf("decoded histogram: %v count %d max %d", err, h.TotalCount(), h.Max())
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "secret") {
		t.Fatal("password written to the result file")
	}
}

func TestReadRejects(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"newer.json":    `{"schema": 99, "steps": []}`,
		"noschema.json": `{"steps": []}`,
		"garbage.json":  `not json`,
	}
	for name, body := range cases {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := Read(p); !agerr.IsBadInput(err) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: got %v, want bad input naming the file", name, err)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing")); !agerr.IsBadInput(err) {
		t.Errorf("missing: %v", err)
	}
}

func TestMergeHistsIsExact(t *testing.T) {
	var all []int64
	var parts []Hist
	for p := 0; p < 4; p++ {
		var vs []int64
		for i := 1; i <= 250; i++ {
			vs = append(vs, int64(i*(p+1)*37%100000+1))
		}
		all = append(all, vs...)
		h, err := NewHist(newHDR(t, vs...))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, h)
	}
	merged, err := MergeHists(append(parts, Hist{})...)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := NewHist(newHDR(t, all...))
	if !reflect.DeepEqual(merged, want) {
		t.Fatalf("merged %+v\nwant   %+v", merged, want)
	}
	m, _ := merged.Histogram()
	w, _ := want.Histogram()
	if !m.Equals(w) {
		t.Fatal("decoded merged histogram differs from one recorded whole")
	}
}

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"host=a password=s3cret user=u", "host=a password=xxxxx user=u"},
		{"host=a password = 'sp ace\\'s' user=u", "host=a password = xxxxx user=u"},
		{"postgres://bob:hunter2@db:5432/x", "postgres://bob:xxxxx@db:5432/x"},
		{"postgresql://db/x?sslmode=disable&password=p&user=u", "postgresql://db/x?sslmode=disable&password=xxxxx&user=u"},
		{"host=a passfile=/tmp/pgpass", "host=a passfile=/tmp/pgpass"},
		{"--threads", "--threads"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// A recorded command line keeps no password at all, so that it runs again when pasted.
	for _, c := range []struct{ in, want string }{
		{"host=a password=s3cret user=u", "host=a user=u"},
		{"host=a password = 'sp ace\\'s' user=u", "host=a user=u"},
		{"postgres://bob:hunter2@db:5432/x", "postgres://bob@db:5432/x"},
		{"east=postgres://bob:hunter2@db:5432/x", "east=postgres://bob@db:5432/x"},
		{"postgresql://db/x?sslmode=disable&password=p&user=u", "postgresql://db/x?sslmode=disable&user=u"},
		{"postgresql://db/x?password=p&user=u", "postgresql://db/x?user=u"},
		{"postgresql://db/x?password=p", "postgresql://db/x"},
		{"--primary=host=a password=s user=u", "--primary=host=a user=u"},
		{"host=a passfile=/tmp/pgpass", "host=a passfile=/tmp/pgpass"},
	} {
		if got := RedactArgs([]string{c.in})[0]; got != c.want {
			t.Errorf("RedactArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCollectHost(t *testing.T) {
	h := CollectHost()
	if h.Cores < 1 || h.OS == "" || h.GoVersion == "" {
		t.Fatalf("host %+v", h)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"schema":1,"steps":[{"ops":{"q":{"latency":{"hdr":"HISTFAAAAC542pJpmSzMwMDAyQABzFCaEURcm7yEwf4DROA4I9NRRqaNBkyAAAAA//+JSAcF"}}}}]}`))
	f.Add([]byte(`{"schema":2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		for _, s := range r.Steps {
			for _, o := range s.Ops {
				if o != nil {
					o.Latency.Histogram()
				}
			}
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
	})
}

func FuzzRedact(f *testing.F) {
	f.Add("host=a password=s3cret")
	f.Add("postgres://u:p@h/d?password=q")
	f.Fuzz(func(t *testing.T, s string) {
		out := Redact(s)
		if Redact(out) != out {
			t.Fatalf("Redact not idempotent on %q: %q then %q", s, out, Redact(out))
		}
	})
}

func TestAddPoint(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := map[string]*TimeSeries{}
	AddPoint(m, "a", "MB/s", start, start.Add(time.Second), 1)
	AddPoint(m, "a", "ignored", start.Add(time.Hour), start.Add(3*time.Second), 2)
	AddPoint(m, "b", "share", time.Time{}, start.Add(2*time.Second), 0.5)
	a, b := m["a"], m["b"]
	if len(m) != 2 || a.Unit != "MB/s" || !a.Start.Equal(start) || len(a.T) != 2 || a.T[1] != 3 || a.V[1] != 2 {
		t.Errorf("series a %+v", a)
	}
	if !b.Start.Equal(start.Add(2*time.Second)) || b.T[0] != 0 || b.V[0] != 0.5 {
		t.Errorf("series b (no start: its first point's) %+v", b)
	}
}
