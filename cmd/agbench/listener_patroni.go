package main

import (
	"net/url"
	"strings"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/listener"
)

// applyPatroni sets --patroni: one Patroni REST API URL per backend, in the order of
// --primary and --standby. A --cluster under Patroni has them from its topology.
func (f *listenerFlags) applyPatroni(cfg *listener.Config) []error {
	if f.patroni == "" {
		return nil
	}
	if f.cluster != "" {
		return []error{agerr.BadInputf("--patroni with --cluster: a cluster under Patroni gives its REST APIs itself")}
	}
	urls, err := parsePatroniURLs(f.patroni)
	if err != nil {
		return []error{err}
	}
	if len(urls) != len(cfg.Backends) {
		return []error{agerr.BadInputf("--patroni: %d URL(s) for %d node(s) (--primary and each --standby, in that order)", len(urls), len(cfg.Backends))}
	}
	for i := range cfg.Backends {
		cfg.Backends[i].PatroniURL = urls[i]
	}
	return nil
}

// parsePatroniURLs reads a comma-separated list of Patroni REST API URLs (http or https,
// a host, no query), naming the first bad one.
func parsePatroniURLs(s string) ([]string, error) {
	var out []string
	for _, raw := range strings.Split(s, ",") {
		raw = strings.TrimSpace(raw)
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, agerr.BadInputf("--patroni %q: want a Patroni REST API URL such as http://127.0.0.1:8008", raw)
		}
		out = append(out, strings.TrimRight(u.String(), "/"))
	}
	return out, nil
}
