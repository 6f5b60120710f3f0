package hostmetrics

import (
	"cmp"
	"slices"
	"time"

	"github.com/prometheus/common/model"
)

// metricUp is the series a Prometheus server writes at each scrape of a target, with the
// target's labels and the scrape's time: 1 when the scrape succeeded, 0 when it failed.
const metricUp = "up"

// scrape is one of a Prometheus server's scrapes of a host: its time on the server's clock,
// whether it succeeded, and the host's samples it gave (every sample of one scrape carries
// the scrape's time).
type scrape struct {
	at      model.Time
	up      bool
	samples model.Vector
}

// scrapeLog is a host's scrapes in a range query's answer, oldest first.
type scrapeLog []scrape

// indexScrapes orders the samples of m by the scrape that gave them. Where m has the
// host's up series, its samples are the scrapes (failed ones too, which give no other
// sample), and a scrape is up when every up series says 1; where it has none (a label the
// server does not put on up), each time a node_cpu_seconds_total sample has is a scrape
// taken as up.
func indexScrapes(m model.Matrix) scrapeLog {
	haveUp := slices.ContainsFunc(m, func(s *model.SampleStream) bool { return s.Metric[model.MetricNameLabel] == metricUp })
	byTime := map[model.Time]*scrape{}
	at := func(t model.Time) *scrape {
		s := byTime[t]
		if s == nil {
			s = &scrape{at: t, up: true}
			byTime[t] = s
		}
		return s
	}
	for _, ss := range m {
		name := ss.Metric[model.MetricNameLabel]
		for _, v := range ss.Values {
			switch {
			case name == metricUp:
				s := at(v.Timestamp)
				s.up = s.up && v.Value == 1
			case !haveUp && name == metricCPU:
				at(v.Timestamp)
			}
		}
	}
	for _, ss := range m {
		if ss.Metric[model.MetricNameLabel] == metricUp {
			continue
		}
		for _, v := range ss.Values {
			if s := byTime[v.Timestamp]; s != nil {
				s.samples = append(s.samples, &model.Sample{Metric: ss.Metric, Value: v.Value, Timestamp: v.Timestamp})
			}
		}
	}
	out := make(scrapeLog, 0, len(byTime))
	for _, s := range byTime {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b scrape) int { return cmp.Compare(a.at, b.at) })
	return out
}

// targets are the scrape targets m has an up series of, each by its labels; more than one
// means the series chosen are of several hosts (or of one scraped twice).
func targets(m model.Matrix) []string {
	var out []string
	for _, ss := range m {
		if ss.Metric[model.MetricNameLabel] != metricUp {
			continue
		}
		l := ss.Metric.Clone()
		delete(l, model.MetricNameLabel)
		if t := l.String(); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// latest is the last scrape, nil when there is none.
func (l scrapeLog) latest() *scrape {
	if len(l) == 0 {
		return nil
	}
	return &l[len(l)-1]
}

// firstFrom is the first scrape at or after t, nil when there is none yet.
func (l scrapeLog) firstFrom(t model.Time) *scrape {
	i, _ := slices.BinarySearchFunc(l, t, func(s scrape, t model.Time) int { return cmp.Compare(s.at, t) })
	if i == len(l) {
		return nil
	}
	return &l[i]
}

// lastUp is the last scrape at or before t that worked, nil when there is none.
func (l scrapeLog) lastUp(t model.Time) *scrape {
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].up && !l[i].at.After(t) {
			return &l[i]
		}
	}
	return nil
}

// firstUpFrom is the first scrape at or after t that worked, nil when there is none yet.
func (l scrapeLog) firstUpFrom(t model.Time) *scrape {
	for s := l.firstFrom(t); s != nil; s = l.firstFrom(s.at + 1) {
		if s.up {
			return s
		}
	}
	return nil
}

// interval is the server's scrape interval of the host as its scrapes show it: the median
// gap between consecutive ones; 0 with fewer than two.
func (l scrapeLog) interval() time.Duration {
	if len(l) < 2 {
		return 0
	}
	gaps := make([]time.Duration, 0, len(l)-1)
	for i := 1; i < len(l); i++ {
		gaps = append(gaps, l[i].at.Sub(l[i-1].at))
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}
