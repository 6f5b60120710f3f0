package result

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histograms record microseconds.
const LatencyUnit = "us"

// Hist is a latency histogram in a result: a summary for readers that only print, and the
// whole HDR histogram (V2 compressed, base64) so that steps and repeats merge exactly and
// any percentile can be read back.
type Hist struct {
	Unit  string  `json:"unit"`
	Count int64   `json:"count"`
	Min   int64   `json:"min"`
	Mean  float64 `json:"mean"`
	P50   int64   `json:"p50"`
	P90   int64   `json:"p90"`
	P95   int64   `json:"p95"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p99_9"`
	Max   int64   `json:"max"`
	// HDR is the encoded histogram; empty for a histogram with no values.
	HDR string `json:"hdr,omitempty"`
}

// NewHist summarises and encodes h (values in LatencyUnit).
func NewHist(h *hdrhistogram.Histogram) (Hist, error) {
	out := Hist{Unit: LatencyUnit, Count: h.TotalCount()}
	if out.Count == 0 {
		return out, nil
	}
	out.Min, out.Mean, out.Max = h.Min(), h.Mean(), h.Max()
	out.P50, out.P90, out.P95 = h.ValueAtQuantile(50), h.ValueAtQuantile(90), h.ValueAtQuantile(95)
	out.P99, out.P999 = h.ValueAtQuantile(99), h.ValueAtQuantile(99.9)
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return Hist{}, fmt.Errorf("encode histogram: %w", err)
	}
	out.HDR = string(b)
	return out, nil
}

// Histogram decodes the stored histogram. An empty Hist decodes to nil, nil.
func (h Hist) Histogram() (*hdrhistogram.Histogram, error) {
	if h.HDR == "" {
		return nil, nil
	}
	d, err := hdrhistogram.Decode([]byte(h.HDR))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return d, nil
}

// MergeHists merges several stored histograms exactly (e.g. the repeats of one step).
func MergeHists(hs ...Hist) (Hist, error) {
	var acc *hdrhistogram.Histogram
	for _, h := range hs {
		d, err := h.Histogram()
		if err != nil {
			return Hist{}, err
		}
		if d == nil {
			continue
		}
		if acc == nil {
			acc = d
			continue
		}
		if dropped := acc.Merge(d); dropped > 0 {
			return Hist{}, fmt.Errorf("merge histograms: %d values out of range", dropped)
		}
	}
	if acc == nil {
		return Hist{Unit: LatencyUnit}, nil
	}
	return NewHist(acc)
}
