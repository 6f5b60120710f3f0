package report

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
)

// synth describes a made-up run measured from a closed queueing model: each variant serves
// Capacity ops/s with ServiceMs per op at best, and VUs queue beyond that. Its results are
// recorded into real HDR histograms from a seeded generator, like a real run's.
type synth struct {
	Command  string
	LoadKey  string // the param that carries the VUs ("threads")
	Loads    []int
	Variants map[string]float64 // variant -> capacity ops/s ("" for none)
	Order    []string
	Repeats  int
	Seconds  float64
	Service  float64 // ms
	Ops      []string
	Counters bool // NOPM/TPM like tpcc
	Bytes    int64
	Samplers bool // waits, device, lag series
	Seed     uint64
}

func (s synth) result(t testing.TB) *result.Result {
	t.Helper()
	rng := rand.New(rand.NewPCG(s.Seed, 7))
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	r := &result.Result{Schema: result.SchemaVersion, Complete: true, Meta: result.Meta{
		Tool: "agbench", ToolVersion: "test", Command: s.Command, Args: append(strings.Fields(s.Command), "--"+s.LoadKey, "1,2"),
		Started: start, Host: result.Host{Hostname: "box", OS: "linux", Arch: "amd64", Cores: 2, GoVersion: "go"},
	}}
	at := start
	idx := 0
	for pi, load := range s.Loads {
		for rep := 0; rep < max(s.Repeats, 1); rep++ {
			for _, v := range s.Order {
				capacity := s.Variants[v]
				// Repeats differ by a few percent, as real ones do.
				capacity *= 1 + 0.04*(rng.Float64()-0.5)
				tput := math.Min(float64(load)*1000/s.Service, capacity)
				meanMs := float64(load) * 1000 / tput
				st := result.Step{Index: idx, Point: pi, Variant: v, Repeat: rep, VUs: load, Complete: true,
					Params: map[string]string{s.LoadKey: strconv.Itoa(load)},
					Window: result.Window{Start: at, End: at.Add(time.Duration(s.Seconds * float64(time.Second)))},
					Ops:    map[string]*result.Op{}, Counters: map[string]float64{}}
				if v != "" {
					k, val, _ := cut(v)
					st.Params[k] = val
				}
				total := int64(tput * s.Seconds)
				for oi, name := range s.Ops {
					h := hdrhistogram.New(1, 60_000_000, 3)
					n := total / int64(len(s.Ops))
					for i := int64(0); i < n && i < 5000; i++ {
						us := meanMs * 1000 * (0.5 + rng.ExpFloat64()*0.5) * (1 + 0.3*float64(oi))
						_ = h.RecordValue(int64(us) + 1)
					}
					hist, err := result.NewHist(h)
					if err != nil {
						t.Fatal(err)
					}
					st.Ops[name] = &result.Op{Count: n, Latency: hist, Bytes: s.Bytes * n}
				}
				if s.Counters {
					st.Counters["nopm"] = tput * 60 * 0.45
					st.Counters["tpm"] = tput * 60
				}
				st.Counters["buffer_hits"] = 1000 * float64(load)
				st.Throughput = map[string]result.TimeSeries{"*": series(st.Window.Start, s.Seconds, tput, rng)}
				if s.Samplers {
					busy := tput / capacity * float64(load)
					at := st.Window.Start
					st.Series = map[string]result.TimeSeries{
						"pg.primary.wait.cpu":                         series(at, s.Seconds, busy*0.4, rng),
						"pg.standby1.wait.cpu":                        series(at, s.Seconds, busy*0.2, rng),
						"pg.primary.wait.log":                         series(at, s.Seconds, busy*0.3, rng),
						"pg.primary.wait.lock":                        series(at, s.Seconds, busy*0.1, rng),
						"pg.primary.standby.standby1.replay_mb_per_s": series(at, s.Seconds, 5, rng),
						"disk.sda.await_ms":                           series(at, s.Seconds, 0.3+0.1*float64(load), rng),
						"disk.sda.queue":                              series(at, s.Seconds, 0.2*float64(load), rng),
						"pg.primary.standby.standby1.replay_lag_s":    series(at, s.Seconds, 0.01*float64(load), rng),
					}
					// As the samplers do: each series' window mean is also a counter.
					for k, ts := range st.Series {
						st.Counters[k] = stats.Mean(ts.V)
					}
				}
				r.Steps = append(r.Steps, st)
				at = at.Add(time.Duration((s.Seconds + 2) * float64(time.Second)))
				idx++
			}
		}
	}
	r.Meta.Ended = at
	return r
}

func cut(v string) (string, string, bool) {
	for i := range v {
		if v[i] == '=' {
			return v[:i], v[i+1:], true
		}
	}
	return v, "", false
}

func series(start time.Time, seconds, level float64, rng *rand.Rand) result.TimeSeries {
	var ts result.TimeSeries
	for i := 1; i <= int(seconds); i++ {
		ts.Add(start.Add(time.Duration(i)*time.Second), level*(0.9+0.2*rng.Float64()))
	}
	return ts
}

// rorStudy is a stress-like sweep of routing off vs on.
func rorStudy() synth {
	return synth{Command: "stress", LoadKey: "threads", Loads: []int{1, 2, 4, 8, 10, 12},
		Variants: map[string]float64{"routing=off": 900, "routing=on": 1500}, Order: []string{"routing=off", "routing=on"},
		Seconds: 10, Service: 2, Ops: []string{"query"}, Bytes: 65536, Samplers: true, Seed: 1}
}

func tpccStudy() synth {
	return synth{Command: "tpcc run", LoadKey: "vus", Loads: []int{1, 2, 4, 8},
		Variants: map[string]float64{"": 400}, Order: []string{""},
		Seconds: 12, Service: 5, Ops: []string{"new_order", "payment", "order_status"}, Counters: true, Samplers: true, Seed: 2}
}

func withAnalysis(t testing.TB, r *result.Result, a any) *result.Result {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	r.Analysis = b
	return r
}

func build(t testing.TB, runs ...*Run) []*Experiment {
	t.Helper()
	exps, err := Build(runs)
	if err != nil {
		t.Fatal(err)
	}
	return exps
}

func strconvFormat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
