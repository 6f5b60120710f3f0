package cluster

import (
	"encoding/json"
	"testing"
)

// A member's lag is bytes when Patroni gives a number, absent when it says "unknown".
func TestPatroniMemberLag(t *testing.T) {
	var v PatroniView
	err := json.Unmarshal([]byte(`{"members":[{"name":"a","role":"leader","state":"running","timeline":2},
		{"name":"b","role":"sync_standby","state":"streaming","lag":1024},{"name":"c","role":"replica","state":"stopped","lag":"unknown"}]}`), &v)
	if err != nil {
		t.Fatal(err)
	}
	if l := v.Leader(); l == nil || l.Name != "a" || l.Lag() != nil {
		t.Fatalf("leader %+v", l)
	}
	if l := v.Members[1].Lag(); l == nil || *l != 1024 {
		t.Fatalf("b's lag %v", l)
	}
	if l := v.Members[2].Lag(); l != nil {
		t.Fatalf("c's lag %v, want absent", *l)
	}
	if p := patroniWholeProblem(&v, []string{"a", "b", "c"}, true); p != "c is stopped" {
		t.Fatalf("whole problem %q", p)
	}
	if p := patroniWholeProblem(&v, []string{"a", "b"}, true); p != "" {
		t.Fatalf("whole problem %q, want none", p)
	}
}

// FuzzPatroniREST: whatever a REST API answers, decoding it and reading it never panics.
func FuzzPatroniREST(f *testing.F) {
	f.Add([]byte(`{"members":[{"name":"a","role":"leader","state":"running","lag":"unknown"}]}`))
	f.Add([]byte(`{"state":"running","role":"master","timeline":3,"xlog":{"location":1}}`))
	f.Add([]byte(`{"members":[{"lag":[1,2]}],"xlog":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var v PatroniView
		if json.Unmarshal(b, &v) == nil {
			for i := range v.Members {
				v.Members[i].Lag()
			}
			v.Leader()
			patroniWholeProblem(&v, []string{"a", "b"}, true)
		}
		var s PatroniState
		if json.Unmarshal(b, &s) == nil {
			s.IsPrimary()
		}
	})
}
