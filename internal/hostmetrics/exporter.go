package hostmetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ErrNotExporter is a scrape whose body has no node_cpu_seconds_total: what answered is
// not a node_exporter (or one with its cpu collector off, which gives no host figures).
var ErrNotExporter = errors.New("no " + metricCPU + " in the answer: not a node_exporter (or its cpu collector is off)")

// Source reads a host's counters.
type Source interface {
	// Read takes one Reading now.
	Read(ctx context.Context) (Reading, error)
	// String names where the figures come from, without credentials.
	String() string
}

// AfterReader is a Source whose readings another takes at moments of its own (a
// Prometheus server's scrapes): ReadAfter gives the first taken at or after t, waiting for
// it (bounded) when it is yet to come.
type AfterReader interface {
	ReadAfter(ctx context.Context, t time.Time) (Reading, error)
}

// maxBody bounds what a scrape reads: a node_exporter's answer is tens of kB; more is
// something else.
const maxBody = 16 << 20

// Exporter reads a node_exporter's /metrics directly.
type Exporter struct {
	url    string
	client *http.Client
}

// NewExporter makes a Source of the node_exporter at rawURL: http(s)://HOST:PORT, its
// path /metrics when it has none. client nil is http.DefaultClient.
func NewExporter(rawURL string, client *http.Client) (*Exporter, error) {
	u, err := ExporterURL(rawURL)
	if err != nil {
		return nil, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	return &Exporter{url: u, client: client}, nil
}

// noAnswer is an error that is ctx's deadline, of a request sent at sent to url, worded as
// what it is — the server did not answer in the time it was given (frozen, overloaded or
// unreachable) — rather than as the client's "context deadline exceeded"; nil for any
// other error, and for a caller that was cancelled.
func noAnswer(ctx context.Context, url string, sent time.Time, err error) error {
	deadline, ok := ctx.Deadline()
	if err == nil || !ok || !errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return fmt.Errorf("%s did not answer within %.1f s: %w", url, deadline.Sub(sent).Seconds(), context.DeadlineExceeded)
}

// ExporterURL checks a node_exporter's URL and gives it with /metrics when it has no path.
func ExporterURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q: give http://HOST:PORT[/metrics]", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("%q: credentials in the URL are not taken (they would be recorded)", u.Redacted())
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	return u.String(), nil
}

func (e *Exporter) String() string { return e.url }

// Read scrapes the exporter; the Reading's time is the midpoint of the request and the
// answer, against which the exporter's clock is measured.
func (e *Exporter) Read(ctx context.Context) (Reading, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url, nil)
	if err != nil {
		return Reading{}, err
	}
	req.Header.Set("Accept", string(expfmt.FmtText))
	sent := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		if na := noAnswer(ctx, e.url, sent, err); na != nil {
			return Reading{}, na
		}
		return Reading{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Reading{}, fmt.Errorf("%s: %s", e.url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	got := time.Now()
	if err != nil {
		if na := noAnswer(ctx, e.url, sent, err); na != nil {
			return Reading{}, na
		}
		return Reading{}, fmt.Errorf("%s: %w", e.url, err)
	}
	r, err := Parse(body, expfmt.ResponseFormat(resp.Header), sent.Add(got.Sub(sent)/2))
	if err != nil {
		return Reading{}, fmt.Errorf("%s: %w", e.url, err)
	}
	return r, nil
}

// Parse decodes an exporter's answer in format (text when unknown) into a Reading read at
// at, on agbench's clock.
func Parse(body []byte, format expfmt.Format, at time.Time) (Reading, error) {
	if format == expfmt.FmtUnknown {
		format = expfmt.FmtText
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), format)
	var all model.Vector
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Reading{}, fmt.Errorf("not the exposition format: %v", err)
		}
		if !slices.Contains(Metrics, mf.GetName()) {
			continue
		}
		v, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.TimeFromUnixNano(at.UnixNano())}, &mf)
		if err != nil {
			return Reading{}, fmt.Errorf("%s: %v", mf.GetName(), err)
		}
		all = append(all, v...)
	}
	return fromVector(all, at)
}
