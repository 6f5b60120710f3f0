package hostmetrics

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// DefaultLabel is the label that tells one host's series from another's in a Prometheus
// server: the scrape target's address, which Prometheus sets on every series it scrapes.
const DefaultLabel = "instance"

// lookback is how far back a read looks for the server's latest scrape of the host: several
// scrape intervals of a server that scrapes often, one of a server that scrapes every 15 s.
const lookback = 30 * time.Second

// ErrNotPrometheus is a URL that answers, but not as Prometheus's HTTP API: a body that is
// not its JSON (a node_exporter's HTML page or exposition text, most often). The parser's
// own account of the body says nothing more to whoever gave the URL, so it is left out.
var ErrNotPrometheus = errors.New("answers HTML/exposition text, not Prometheus's HTTP API (/api/v1/…)")

// Prometheus reads a host's node_exporter series from a Prometheus server that scrapes it,
// through the server's HTTP API: the series whose Label is Value.
type Prometheus struct {
	api          v1.API
	url          string
	label, value string
	// offset is the server's clock minus agbench's, in seconds, measured when it was made:
	// the server's scrape times are moved onto agbench's clock by it.
	offset float64
}

// NewPrometheus makes a Source of the series of one host in the Prometheus server at
// rawURL: those whose label (DefaultLabel when "") is value. It asks the server for its
// clock; it does not check that the host's series are there (Check does).
func NewPrometheus(ctx context.Context, rawURL, label, value string) (*Prometheus, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q: give the server's http://HOST:PORT", rawURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%q: credentials in the URL are not taken (they would be recorded)", u.Redacted())
	}
	if label == "" {
		label = DefaultLabel
	}
	if !model.LabelName(label).IsValid() {
		return nil, fmt.Errorf("%q is not a label name", label)
	}
	c, err := api.NewClient(api.Config{Address: u.String()})
	if err != nil {
		return nil, err
	}
	p := &Prometheus{api: v1.NewAPI(c), url: u.String(), label: label, value: value}
	if p.offset, err = p.clockOffset(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Prometheus) String() string {
	return fmt.Sprintf("%s %s=%q", p.url, p.label, p.value)
}

// clockOffset asks the server for its time: its clock minus agbench's at the midpoint of
// the query.
func (p *Prometheus) clockOffset(ctx context.Context) (float64, error) {
	sent := time.Now()
	v, _, err := p.api.Query(ctx, "time()", time.Time{})
	got := time.Now()
	var apiErr *v1.Error
	if errors.As(err, &apiErr) && apiErr.Type == v1.ErrBadResponse {
		return 0, fmt.Errorf("%s: %w", p.url, ErrNotPrometheus)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: no answer from a Prometheus server's HTTP API: %w", p.url, err)
	}
	s, ok := v.(*model.Scalar)
	if !ok {
		return 0, fmt.Errorf("%s: time() gave %s, not a scalar: not a Prometheus server", p.url, v.Type())
	}
	mid := sent.Add(got.Sub(sent) / 2)
	return float64(s.Value) - float64(mid.UnixNano())/1e9, nil
}

// selector is the host's series of the metrics given.
func (p *Prometheus) selector(metrics ...string) string {
	return fmt.Sprintf(`{__name__=~%s,%s=%s}`, strconv.Quote(strings.Join(metrics, "|")), p.label, strconv.Quote(p.value))
}

// Read takes the server's latest scrape of the host: the samples of the scrape that gave
// the latest node_cpu_seconds_total, at that scrape's time on agbench's clock.
func (p *Prometheus) Read(ctx context.Context) (Reading, error) {
	q := fmt.Sprintf("%s[%ds]", p.selector(Metrics...), int(lookback.Seconds()))
	v, _, err := p.api.Query(ctx, q, time.Now().Add(time.Duration(p.offset*float64(time.Second))))
	if err != nil {
		return Reading{}, fmt.Errorf("%s: %w", p.url, err)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return Reading{}, fmt.Errorf("%s: a range query gave %s", p.url, v.Type())
	}
	var latest model.Time
	for _, s := range m {
		if n := len(s.Values); n > 0 && s.Metric[model.MetricNameLabel] == metricCPU && s.Values[n-1].Timestamp > latest {
			latest = s.Values[n-1].Timestamp
		}
	}
	if latest == 0 {
		return Reading{}, fmt.Errorf("%s has no %s of the host in the last %v", p, metricCPU, lookback)
	}
	var vec model.Vector
	for _, s := range m {
		if n := len(s.Values); n > 0 && s.Values[n-1].Timestamp == latest {
			vec = append(vec, &model.Sample{Metric: s.Metric, Value: s.Values[n-1].Value, Timestamp: latest})
		}
	}
	at := latest.Time().Add(-time.Duration(p.offset * float64(time.Second)))
	return fromVector(vec, at)
}

// Values lists the values the server's node_exporter series have of the source's label
// (what a mapping of nodes may name), sorted.
func (p *Prometheus) Values(ctx context.Context) ([]string, error) {
	v, _, err := p.api.Query(ctx, fmt.Sprintf("count by (%s) (%s)", p.label, metricCPU), time.Time{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.url, err)
	}
	vec, _ := v.(model.Vector)
	var out []string
	for _, s := range vec {
		if x := string(s.Metric[model.LabelName(p.label)]); x != "" {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out, nil
}
