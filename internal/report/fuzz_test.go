package report

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// FuzzReport feeds result files of any shape through everything the report does with them:
// it must never panic, and a page it renders must stay free of scripts.
func FuzzReport(f *testing.F) {
	s := rorStudy()
	s.Loads, s.Seconds = []int{1, 4}, 3
	small, _ := json.Marshal(withAnalysis(f, s.result(f), map[string]any{"routing=on": map[string]any{"knee": map[string]any{"knee": map[string]any{"load": 4}}}}))
	f.Add(small)
	f.Add([]byte(`{"schema":1,"meta":{"command":"seed"},"steps":[{"vus":0,"ops":{"x":null},"window":{}}]}`))
	f.Add([]byte(`{"schema":1,"analysis":[{"variant":"a","knee":{}}],"steps":[{"variant":"a=<b>","vus":-3,"ops":{"q":{"count":5,"latency":{"hdr":"!!"}}}}]}`))
	f.Add([]byte(`{"schema":1,"steps":[{"series":{"pg.wait.cpu":{"t":[1,2],"v":[1]},"x.lag":{"t":[0],"v":[1e308]}}}]}`))
	f.Add([]byte(`{"schema":1,"meta":{"command":"readahead"},"extra":{"readahead":{"table":[null,{"query":"q","off":{"runs":1},"ratio":-1}]}},"steps":[{"vus":1,"extra":{"seed":{"phases":[null,{"name":"x","seconds":1e308}]}}}]}`))
	f.Add([]byte(`{"schema":1,"meta":{"command":"drill"},"extra":{"drill":{"fault":"kill-primary","cycles_done":1,"no_sync_max_seconds":2}},"steps":[{"extra":{"drill":{"cycle":1,"checked":true,"sync_gap":{"no_sync_seconds":2,"waited_seconds":1,"open":true},"timeline":{"start":"2026-01-01T00:00:00Z","interval_ms":100,"writes":[1,0,2],"write_errors":[0,1,0],"reads":[1,1,1],"read_errors":[0,0,0]}}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := result.Decode(b)
		if err != nil {
			return
		}
		exps, err := Build([]*Run{NewRun("x", r)})
		if err != nil {
			return
		}
		for _, e := range exps {
			for _, tb := range e.Tables() {
				_ = WriteText(io.Discard, tb)
				if _, err := CSV(tb); err != nil {
					t.Fatal(err)
				}
			}
			e.Findings()
		}
		page, err := HTML(exps, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToLower(string(page)), "<script") {
			t.Fatal("script in page")
		}
	})
}

func TestVariantOrderFromCompare(t *testing.T) {
	m := result.Meta{Args: []string{"tpcc", "run", "--compare", "commit=sync,async,local"}}
	got := orderVariants([]string{"commit=async", "other", "commit=local", "commit=sync"}, m)
	if strings.Join(got, " ") != "commit=sync commit=async commit=local other" {
		t.Fatal(got)
	}
	m = result.Meta{Args: []string{"--compare=a=2,1"}}
	if got := orderVariants([]string{"a=1", "a=2"}, m); got[0] != "a=2" {
		t.Fatal(got)
	}
}
