package experiment

import (
	"context"
	"errors"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/hostmetrics"
	"github.com/agbench/agbench/internal/sample"
	"github.com/agbench/agbench/internal/target"
)

// HostMetricsFlags say where the nodes' host figures come from when the nodes run on other
// hosts: each node's node_exporter (--host-metrics NODE=URL), or a Prometheus server that
// scrapes them (--prometheus URL, each node's series told apart by the value of a label).
type HostMetricsFlags struct {
	Exporters  []string
	Prometheus string
	Instances  []string
	Label      string
}

// Register adds the flags to fs.
func (f *HostMetricsFlags) Register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.Exporters, "host-metrics", nil, "NODE=URL: read the node's host figures (CPU, run queue, memory, devices, network) from the Prometheus node_exporter on its host, http://HOST:PORT[/metrics], at each window's open and close and every second between (repeatable; NODE as the target names it: a cluster's node, primary, standby1 ..., or NAME of --standby NAME=URL; a --cluster's nodes read the exporters its topology names unless given)")
	fs.StringVar(&f.Prometheus, "prometheus", "", "read the nodes' host figures from this Prometheus server (http://HOST:PORT) that scrapes their node_exporters, each node's series chosen by --prometheus-instance")
	fs.StringArrayVar(&f.Instances, "prometheus-instance", nil, "with --prometheus: NODE=VALUE, the value of --prometheus-label on the node's host's series (repeatable; a --cluster's node defaults to the HOST:PORT of the exporter its topology names)")
	fs.StringVar(&f.Label, "prometheus-label", hostmetrics.DefaultLabel, "with --prometheus: the label whose value tells the hosts' series apart")
}

// HostMetrics is what the flags say, checked without a network: per node, the URL of its
// exporter, or its label value in the Prometheus server.
type HostMetrics struct {
	Exporters         map[string]string
	Prometheus, Label string
	Instances         map[string]string
}

// Given says whether any node's host figures are to be read.
func (h HostMetrics) Given() bool { return len(h.Exporters) > 0 || h.Prometheus != "" }

// Parse checks the flags: NODE=VALUE pairs, URLs, no node named twice, a label name, and
// --prometheus-instance only with --prometheus.
func (f *HostMetricsFlags) Parse() (HostMetrics, error) {
	h := HostMetrics{Prometheus: f.Prometheus, Label: f.Label, Exporters: map[string]string{}, Instances: map[string]string{}}
	var errs []error
	seen := map[string]string{}
	pairs := func(flag string, given []string, into map[string]string, check func(string) error) {
		for _, g := range given {
			node, v, ok := strings.Cut(g, "=")
			if !ok || node == "" || v == "" {
				errs = append(errs, agerr.BadInputf("--%s %q: give NODE=%s", flag, g, map[bool]string{true: "URL", false: "VALUE"}[flag == "host-metrics"]))
				continue
			}
			if prev, dup := seen[node]; dup {
				errs = append(errs, agerr.BadInputf("--%s %s: node %s named twice (also by --%s)", flag, node, node, prev))
				continue
			}
			seen[node] = flag
			if err := check(v); err != nil {
				errs = append(errs, agerr.BadInputf("--%s %s=%s", flag, node, err))
				continue
			}
			into[node] = v
		}
	}
	pairs("host-metrics", f.Exporters, h.Exporters, func(v string) error { _, err := hostmetrics.ExporterURL(v); return err })
	pairs("prometheus-instance", f.Instances, h.Instances, func(string) error { return nil })
	if f.Prometheus != "" {
		if u, err := url.Parse(f.Prometheus); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			errs = append(errs, agerr.BadInputf("--prometheus %q: give the server's http://HOST:PORT, without credentials", redactURL(f.Prometheus)))
		}
		if !model.LabelName(f.Label).IsValid() {
			errs = append(errs, agerr.BadInputf("--prometheus-label %q: not a label name (letters, digits, _)", f.Label))
		}
	} else if len(f.Instances) > 0 {
		errs = append(errs, agerr.BadInputf("--prometheus-instance needs --prometheus (the server to ask)"))
	}
	return h, agerr.Join(errs...)
}

// redactURL hides a URL's password.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return s
}

// Resolve checks the nodes named against the target's nodes and fills in, for a cluster's
// (topo, nil for servers given by connection strings) nodes not named, the exporter its
// topology names (with --prometheus: its HOST:PORT, the instance label Prometheus gives what
// it scrapes at that address).
func (h HostMetrics) Resolve(nodes []string, topo *cluster.Topology) (HostMetrics, error) {
	var errs []error
	for _, m := range []struct {
		flag  string
		nodes map[string]string
	}{{"--host-metrics", h.Exporters}, {"--prometheus-instance", h.Instances}} {
		for _, n := range slices.Sorted(maps.Keys(m.nodes)) {
			if !slices.Contains(nodes, n) {
				errs = append(errs, agerr.BadInputf("%s %s: the target has no node %s (its nodes: %s)", m.flag, n, n, strings.Join(nodes, ", ")))
			}
		}
	}
	if err := agerr.Join(errs...); err != nil {
		return h, err
	}
	out := HostMetrics{Prometheus: h.Prometheus, Label: h.Label, Exporters: maps.Clone(h.Exporters), Instances: maps.Clone(h.Instances)}
	if topo != nil {
		for _, n := range topo.Nodes {
			_, e := out.Exporters[n.Name]
			_, i := out.Instances[n.Name]
			if n.HostMetrics == "" || e || i {
				continue
			}
			if out.Prometheus == "" {
				out.Exporters[n.Name] = n.HostMetrics
			} else if u, err := url.Parse(n.HostMetrics); err == nil && u.Host != "" {
				out.Instances[n.Name] = u.Host
			}
		}
	}
	if out.Prometheus != "" && len(out.Instances) == 0 {
		return out, agerr.BadInputf("--prometheus %s: no node's series named: give --prometheus-instance NODE=VALUE for each node to read", redactURL(out.Prometheus))
	}
	return out, nil
}

// targetNodes are the names of the target's servers, as its results name them.
func targetNodes(tgt *target.Target) []string {
	if tgt.Topo != nil {
		var out []string
		for _, n := range tgt.Topo.Nodes {
			out = append(out, n.Name)
		}
		return out
	}
	var out []string
	if tgt.Primary != "" {
		out = append(out, tgt.NameOfPrimary())
	}
	for i := range tgt.Standbys {
		out = append(out, tgt.NameOfStandby(i))
	}
	return out
}

// readBounded reads src once within the remote sampler's bound on a read: an exporter that
// accepts the connection and never answers (frozen, overloaded) is refused, not waited on.
func readBounded(ctx context.Context, src hostmetrics.Source) (hostmetrics.Reading, error) {
	ctx, cancel := context.WithTimeout(ctx, sample.RemoteReadTimeout)
	defer cancel()
	return src.Read(ctx)
}

// Sources makes every node's source and reads it once, so that a URL that is not an
// exporter, an exporter that does not answer, or a Prometheus server without a node's
// series is bad input before anything runs, naming the flag and the node.
func (h HostMetrics) Sources(ctx context.Context) ([]sample.RemoteHost, error) {
	var out []sample.RemoteHost
	var errs []error
	for _, n := range slices.Sorted(maps.Keys(h.Exporters)) {
		src, err := hostmetrics.NewExporter(h.Exporters[n], nil)
		if err == nil {
			_, err = readBounded(ctx, src)
		}
		if err != nil {
			errs = append(errs, agerr.BadInputf("--host-metrics %s=%s: %v", n, h.Exporters[n], err))
			continue
		}
		out = append(out, sample.RemoteHost{Node: n, Source: src})
	}
	if h.Prometheus == "" {
		return out, agerr.Join(errs...)
	}
	for _, n := range slices.Sorted(maps.Keys(h.Instances)) {
		src, err := hostmetrics.NewPrometheus(ctx, h.Prometheus, h.Label, h.Instances[n])
		if errors.Is(err, hostmetrics.ErrNotPrometheus) {
			errs = append(errs, agerr.BadInputf("--prometheus %v; for a node_exporter use --host-metrics NODE=URL", err))
			break
		}
		if err != nil {
			errs = append(errs, agerr.BadInputf("--prometheus: %v", err))
			break
		}
		if _, err := src.Read(ctx); err != nil {
			values, _ := src.Values(ctx)
			errs = append(errs, agerr.BadInputf("--prometheus-instance %s=%s: %v (the server's node_exporter series have %s: %s)",
				n, h.Instances[n], err, h.Label, strings.Join(values, ", ")))
			continue
		}
		out = append(out, sample.RemoteHost{Node: n, Source: src})
	}
	return out, agerr.Join(errs...)
}
