package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
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

// A cluster known only by its REST APIs: every member Patroni lists counts, one per API.
func TestPatroniWholeAtURLs(t *testing.T) {
	view := `{"members":[{"name":"a","role":"leader","state":"running"},{"name":"b","role":"replica","state":"streaming"}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cluster" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(view))
	}))
	defer srv.Close()
	ctx := context.Background()
	cases := []struct {
		w    PatroniWhole
		want string
	}{
		{PatroniWhole{URLs: []string{srv.URL, srv.URL}}, ""},
		{PatroniWhole{URLs: []string{srv.URL, srv.URL}, SyncMode: true}, "no synchronous standby yet"},
		{PatroniWhole{URLs: []string{srv.URL, srv.URL, srv.URL}}, "2 members for 3 REST APIs"},
		{PatroniWhole{URLs: []string{srv.URL}, Names: []string{"a", "c"}}, "c is not a member"},
		{PatroniWhole{URLs: []string{"http://127.0.0.1:1"}}, "no Patroni REST API answered"},
	}
	for _, c := range cases {
		got, _ := c.w.Problem(ctx)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.w, got, c.want)
		}
	}
	if err := (PatroniWhole{URLs: []string{srv.URL}, SyncMode: true}).Wait(ctx, 0); err == nil || !strings.Contains(err.Error(), "no synchronous standby yet") {
		t.Errorf("wait: %v", err)
	}
}

// FuzzPatroniREST: whatever a REST API answers, decoding it and reading it never panics.
func FuzzPatroniREST(f *testing.F) {
	f.Add([]byte(`{"members":[{"name":"a","role":"leader","state":"running","lag":"unknown"}]}`))
	f.Add([]byte(`{"state":"running","role":"master","timeline":3,"xlog":{"location":1}}`))
	f.Add([]byte(`{"members":[{"lag":[1,2]}],"xlog":null}`))
	f.Add([]byte(`{"ttl":10,"loop_wait":2,"synchronous_mode":true,"synchronous_mode_strict":"yes"}`))
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
		var c PatroniConfig
		_ = json.Unmarshal(b, &c)
	})
}
