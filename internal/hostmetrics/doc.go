// Package hostmetrics owns reading another host's figures from Prometheus's node_exporter:
// directly (its /metrics, decoded with the Prometheus project's exposition-format parser)
// or through a Prometheus server that scrapes it (its HTTP API, with the Prometheus
// project's client). A Source gives Readings, the host's counters at one moment; Between
// turns two Readings into the per-second figures of the interval between them, named as
// the local samplers name this machine's ("host.<node>.*", result's names.go), and says
// of each figure it could not make why it is absent, never 0.
//
// It knows nothing of windows, steps or nodes' roles: internal/sample's remote-host sampler
// scrapes it beside each window. It must not import the runner, the samplers, the cluster,
// the experiments, the analysis or the report.
//
// Imports from agbench: only internal/agerr, internal/result.
package hostmetrics
