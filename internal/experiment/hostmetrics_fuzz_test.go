package experiment

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/hostmetrics"
)

// FuzzHostMetricsFlags: any values of the host flags either are bad input, or name each
// node once with an exporter URL that reads back as itself.
func FuzzHostMetricsFlags(f *testing.F) {
	f.Add("primary=http://h:9100", "standby1=http://h2:9100/metrics", "", "", "instance")
	f.Add("a=http://u:p@h", "", "http://p:9090", "b=h:9100", "nodename")
	f.Add("=", "a=b=c", "ftp://x", "a=", "0bad")
	f.Fuzz(func(t *testing.T, e1, e2, prom, inst, label string) {
		fl := HostMetricsFlags{Prometheus: prom, Label: label}
		for _, e := range []string{e1, e2} {
			if e != "" {
				fl.Exporters = append(fl.Exporters, e)
			}
		}
		if inst != "" {
			fl.Instances = []string{inst}
		}
		h, err := fl.Parse()
		if err != nil {
			if !agerr.IsBadInput(err) {
				t.Fatalf("%+v: an error that is not bad input: %v", fl, err)
			}
			return
		}
		for node, u := range h.Exporters {
			if _, dup := h.Instances[node]; dup || node == "" || strings.Contains(node, "=") {
				t.Fatalf("node %q taken (%+v)", node, h)
			}
			if _, err := hostmetrics.ExporterURL(u); err != nil {
				t.Fatalf("%s=%s taken: %v", node, u, err)
			}
		}
		if len(h.Instances) > 0 && h.Prometheus == "" {
			t.Fatalf("instances without a server: %+v", h)
		}
	})
}
