package hostmetrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// DefaultLabel is the label that tells one host's series from another's in a Prometheus
// server: the scrape target's address, which Prometheus sets on every series it scrapes.
const DefaultLabel = "instance"

// lookback is how far back a read first looks for the server's latest scrape of the host:
// several scrape intervals of a server that scrapes often, two of one that scrapes every
// 15 s. Once the host's scrapes show their interval, a read looks back far enough for it
// (span).
const lookback = 30 * time.Second

// maxLookback is how far back a read looks when the last lookback held no scrape of the
// host: Prometheus scrapes every minute unless told otherwise, and a host scraped that
// seldom is read, not said to be unscraped.
const maxLookback = 10 * time.Minute

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
	// every is the host's scrape interval as the last scrapes read showed it (a
	// time.Duration; 0 while unknown): how far back the next read looks.
	every atomic.Int64
}

// span is how far back a read looks for the host's scrapes: lookback, or, once the
// scrapes showed their interval, far enough to tell stale series from a long interval.
func (p *Prometheus) span() time.Duration {
	if every := time.Duration(p.every.Load()); every > 0 {
		return max(lookback, staleAfter(every)+every)
	}
	return lookback
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
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	sent := time.Now()
	v, _, err := p.api.Query(ctx, "time()", time.Time{})
	got := time.Now()
	if e := noAnswer(ctx, p.url, sent, err); e != nil {
		return 0, fmt.Errorf("no answer from a Prometheus server's HTTP API: %w", e)
	}
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

// Read takes the server's latest scrape of the host that worked, at that scrape's time on
// agbench's clock. A scrape that failed (up 0) among ones that worked is passed over while
// the last that worked is recent (staleAfter): the host's latest figures are still its. Past
// that, the host's failing scrapes are an error with the server's account of why, naming the
// host's series, and a last scrape too old for the server's interval says the series are
// stale: never the figures of an earlier scrape carried on.
func (p *Prometheus) Read(ctx context.Context) (Reading, error) {
	log, now, err := p.scrapes(ctx, p.span())
	if err == nil && log.latest() == nil && p.span() < maxLookback {
		log, now, err = p.scrapes(ctx, maxLookback)
	}
	if err != nil {
		return Reading{}, err
	}
	last := log.latest()
	if last == nil {
		return Reading{}, fmt.Errorf("%s has no %s of the host in the last %v", p, metricCPU, maxLookback)
	}
	every := log.interval()
	ok := log.lastUp(last.at)
	switch {
	case ok != nil && (every <= 0 || now.Sub(ok.at) <= staleAfter(every)):
		return p.reading(ctx, ok)
	case !last.up:
		return Reading{}, p.failed(ctx, last)
	}
	return Reading{}, fmt.Errorf("Prometheus last scraped %s %.1f s ago, though it scrapes it %s: its series are stale (the target is no longer scraped, or the server is behind)",
		p.series(), now.Sub(last.at).Seconds(), scrapesEvery(every))
}

// ReadAfter takes the server's first scrape of the host at or after t (agbench's clock)
// that worked, waiting for it when the server has not taken it yet: the reading at a
// window's close, which the latest scrape before the close would leave short of it. It
// waits at most afterWait of the server's scrape interval past t, then fails saying why:
// the scrapes since t failed (with the server's account), or there were none.
func (p *Prometheus) ReadAfter(ctx context.Context, t time.Time) (Reading, error) {
	at := model.TimeFromUnixNano(t.Add(p.offsetDuration()).UnixNano())
	for {
		log, now, err := p.scrapes(ctx, p.span()+max(0, time.Since(t)))
		if err != nil {
			return Reading{}, err
		}
		if s := log.firstUpFrom(at); s != nil {
			return p.reading(ctx, s)
		}
		every := log.interval()
		if waited := now.Sub(at); waited > afterWait(every) {
			if log.firstFrom(at) != nil {
				return Reading{}, p.failed(ctx, log.latest())
			}
			return Reading{}, fmt.Errorf("Prometheus took no scrape of %s in the %.1f s after %s (it scrapes it %s)",
				p.series(), waited.Seconds(), t.UTC().Format(clockFormat), scrapesEvery(every))
		}
		select {
		case <-ctx.Done():
			return Reading{}, fmt.Errorf("waiting for Prometheus's scrape of %s after %s: %w", p.series(), t.UTC().Format(clockFormat), ctx.Err())
		case <-time.After(pollEvery(every)):
		}
	}
}

// scrapesEvery says how often the server scrapes the host, as its scrapes show it.
func scrapesEvery(every time.Duration) string {
	if every <= 0 {
		return "at an interval its scrapes do not show yet (fewer than two)"
	}
	return fmt.Sprintf("every %.1f s", every.Seconds())
}

// queryTimeout bounds every question to the server: one that does not answer within it is
// down, frozen or overloaded, and no read (nor ReadAfter's wait for a scrape) hangs on it.
const queryTimeout = 5 * time.Second

// clockFormat is how a moment is named in an error: its time of day, to the millisecond.
const clockFormat = "15:04:05.000 UTC"

// staleAfter is how old the latest of scrapes every interval apart may be and still be
// the host's present: a server that runs late may be a few scrapes behind.
func staleAfter(every time.Duration) time.Duration { return 3*every + 2*time.Second }

// afterWait is how long past a moment ReadAfter waits for the server's next scrape: two
// scrape intervals (a scrape may take up to one) and a margin for a busy server; a server
// whose interval is unknown (fewer than two scrapes) is given the lookback.
func afterWait(every time.Duration) time.Duration {
	if every <= 0 {
		return lookback
	}
	return 2*every + 2*time.Second
}

// pollEvery is how often ReadAfter asks again: a tenth of the scrape interval, between
// 20 ms and half a second.
func pollEvery(every time.Duration) time.Duration {
	return min(max(every/10, 20*time.Millisecond), 500*time.Millisecond)
}

func (p *Prometheus) offsetDuration() time.Duration {
	return time.Duration(p.offset * float64(time.Second))
}

// series names the host's series: `instance="10.0.0.5:9100"`.
func (p *Prometheus) series() string { return fmt.Sprintf("%s=%q", p.label, p.value) }

// scrapes asks the server for the host's series of the last span (with up, which says
// of each scrape whether it succeeded), and gives its scrapes with the server's time now.
func (p *Prometheus) scrapes(ctx context.Context, span time.Duration) (scrapeLog, model.Time, error) {
	q := fmt.Sprintf("%s[%ds]", p.selector(append([]string{metricUp}, Metrics...)...), int(math.Ceil(span.Seconds())))
	now := model.TimeFromUnixNano(time.Now().Add(p.offsetDuration()).UnixNano())
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	sent := time.Now()
	v, _, err := p.api.Query(ctx, q, now.Time())
	if err != nil {
		if e := noAnswer(ctx, p.url, sent, err); e != nil {
			return nil, 0, e
		}
		return nil, 0, fmt.Errorf("%s: %w", p.url, err)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, 0, fmt.Errorf("%s: a range query gave %s", p.url, v.Type())
	}
	if ts := targets(m); len(ts) > 1 {
		return nil, 0, fmt.Errorf("the series of %s are of %d scrape targets, %s: one host's need a label whose value only its own have",
			p.series(), len(ts), strings.Join(ts, " and "))
	}
	log := indexScrapes(m)
	if every := log.interval(); every > 0 {
		p.every.Store(int64(every))
	}
	return log, now, nil
}

// reading is the Reading of scrape s, or why there is none: the scrape failed (with the
// server's last scrape error of the host's target), or it gave no node_cpu_seconds_total.
func (p *Prometheus) reading(ctx context.Context, s *scrape) (Reading, error) {
	at := s.at.Time().Add(-p.offsetDuration())
	if !s.up {
		return Reading{}, p.failed(ctx, s)
	}
	r, err := fromVector(s.samples, at)
	if errors.Is(err, ErrNotExporter) {
		return Reading{}, fmt.Errorf("Prometheus's scrape of %s at %s: %w", p.series(), at.UTC().Format(clockFormat), err)
	}
	return r, err
}

// failed says that scrape s failed, with the server's account of why.
func (p *Prometheus) failed(ctx context.Context, s *scrape) error {
	at := s.at.Time().Add(-p.offsetDuration())
	return fmt.Errorf("Prometheus's scrape of %s at %s failed (up 0): %s", p.series(), at.UTC().Format(clockFormat), p.lastError(ctx))
}

// lastError is the server's account of its last failed scrape of the host's targets (its
// targets API), or what up 0 means when it gives none.
func (p *Prometheus) lastError(ctx context.Context) string {
	const none = "the server could not scrape the exporter"
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	res, err := p.api.Targets(ctx)
	if err != nil {
		return none
	}
	var errs []string
	for _, t := range res.Active {
		if string(t.Labels[model.LabelName(p.label)]) == p.value && t.LastError != "" && !slices.Contains(errs, t.LastError) {
			errs = append(errs, t.LastError)
		}
	}
	if len(errs) == 0 {
		return none
	}
	return strings.Join(errs, "; ")
}

// Values lists the values the server's node_exporter series have of the source's label
// (what a mapping of nodes may name), sorted.
func (p *Prometheus) Values(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	sent := time.Now()
	v, _, err := p.api.Query(ctx, fmt.Sprintf("count by (%s) (%s)", p.label, metricCPU), time.Time{})
	if err != nil {
		if e := noAnswer(ctx, p.url, sent, err); e != nil {
			return nil, e
		}
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
