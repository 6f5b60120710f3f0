package listener

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/routing"
)

// httpHandler serves /metrics, /status and /route on the metrics address.
func (l *Listener) httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		l.writeProm(w)
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		st := l.Status()
		primary := ""
		for _, n := range st {
			if n.Role == routing.RolePrimary.String() {
				primary = n.Name
			}
		}
		_ = json.NewEncoder(w).Encode(struct {
			// Primary is the one node taken for the primary ("" when there is none).
			Primary    string       `json:"primary"`
			Nodes      []NodeStatus `json:"nodes"`
			Forwarding string       `json:"forwarding"`
		}{primary, st, l.Forwarding()})
	})
	mux.HandleFunc("GET /route", func(w http.ResponseWriter, r *http.Request) {
		intent := routing.ReadWrite
		if v := r.URL.Query().Get("intent"); v != "" {
			var err error
			if intent, err = routing.ParseIntent(v); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		q := r.URL.Query()
		var minLSN uint64
		if v := q.Get("min_lsn"); v != "" {
			var err error
			if minLSN, err = cluster.ParseLSN(v); err != nil {
				http.Error(w, "min_lsn: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		cons := l.cfg.Consistency
		if v := q.Get("consistency"); v != "" {
			var err error
			if cons, err = ParseConsistency(v); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		name, addr, err := l.RouteCausal(intent, minLSN, cons)
		var nt *routing.NoTargetError
		var ce *causalError
		switch {
		case errors.As(err, &ce):
			l.metrics.addFailure(ce.fail, intent.String()+"-redirect")
			status := http.StatusServiceUnavailable
			if ce.fail == FailCausalFuture {
				status = http.StatusBadRequest
			}
			http.Error(w, err.Error(), status)
			return
		case errors.As(err, &nt):
			l.metrics.addFailure(FailNoTarget, intent.String()+"-redirect")
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		l.metrics.sessionRedirected(intent, name)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(RouteAnswer{Node: name, Addr: addr})
	})
	return mux
}

// RouteAnswer is the redirect path's answer: the node a session of the asked intent
// belongs on, and its address.
type RouteAnswer struct {
	Node string `json:"node"`
	Addr string `json:"addr"`
}
