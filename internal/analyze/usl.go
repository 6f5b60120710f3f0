package analyze

import (
	"math"

	"gonum.org/v1/gonum/optimize"

	"github.com/agbench/agbench/internal/stats"
)

// USL fit thresholds: the fit is shown only when it explains the data well and has enough
// distinct loads to pin three parameters down.
const (
	USLMinR2     = 0.95
	USLMinPoints = 6
)

// USL is a fit of the Universal Scalability Law (Gunther):
//
//	X(N) = λN / (1 + σ(N−1) + κN(N−1))
//
// where λ is the throughput of one user alone, σ the contention (serial share) and κ the
// coherency cost (crosstalk) that makes throughput fall past the peak.
type USL struct {
	Lambda float64 `json:"lambda"`
	Sigma  float64 `json:"sigma"`
	Kappa  float64 `json:"kappa"`
	R2     float64 `json:"r2"`
	Points int     `json:"points"` // distinct loads fitted
	// PeakLoad is where the fitted curve peaks, sqrt((1−σ)/κ); +Inf when κ is 0.
	PeakLoad       float64 `json:"peak_load"`
	PeakThroughput float64 `json:"peak_throughput"`
	// Good says the fit may be shown: R² ≥ USLMinR2 on ≥ USLMinPoints loads.
	Good bool `json:"good"`
}

// Predict is the fitted throughput at load n.
func (u USL) Predict(n float64) float64 {
	return u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))
}

// FitUSL fits the law to a sweep by nonlinear least squares on throughput, using every
// repeat as its own observation. λ is solved in closed form for each (σ, κ); gonum's
// Nelder–Mead searches σ = a², κ = b² (so both stay ≥ 0) from several starts.
// It returns false when there are fewer than three distinct loads.
func FitUSL(steps []Step) (USL, bool) {
	var ns, ys []float64
	loads := map[float64]bool{}
	ymax := 0.0
	for _, s := range sortedSteps(steps) {
		obs := s.Repeats
		if len(obs) == 0 {
			obs = []float64{s.Throughput}
		}
		for _, y := range obs {
			ns, ys = append(ns, s.Load), append(ys, y)
			ymax = math.Max(ymax, y)
		}
		loads[s.Load] = true
	}
	if len(loads) < 3 || ymax <= 0 {
		return USL{}, false
	}
	for i := range ys {
		ys[i] /= ymax // fit on a unit scale so the tolerances mean the same for any workload
	}
	sse := func(sigma, kappa float64) (float64, float64) {
		var gy, gg float64
		g := make([]float64, len(ns))
		for i, n := range ns {
			g[i] = n / (1 + sigma*(n-1) + kappa*n*(n-1))
			gy += g[i] * ys[i]
			gg += g[i] * g[i]
		}
		lambda := gy / gg
		e := 0.0
		for i := range ns {
			r := ys[i] - lambda*g[i]
			e += r * r
		}
		return e, lambda
	}
	prob := optimize.Problem{Func: func(x []float64) float64 {
		e, _ := sse(x[0]*x[0], x[1]*x[1])
		return e
	}}
	best, bestF := []float64{0, 0}, math.Inf(1)
	for _, a := range []float64{0.01, 0.1, 0.5} {
		for _, b := range []float64{1e-4, 1e-2, 0.1} {
			res, err := optimize.Minimize(prob, []float64{math.Sqrt(a), math.Sqrt(b)},
				&optimize.Settings{Converger: &optimize.FunctionConverge{Absolute: 1e-15, Relative: 1e-12, Iterations: 200}, FuncEvaluations: 20000},
				&optimize.NelderMead{})
			if err == nil && res.F < bestF {
				best, bestF = res.X, res.F
			}
		}
	}
	u := USL{Sigma: best[0] * best[0], Kappa: best[1] * best[1], Points: len(loads)}
	e, lambda := sse(u.Sigma, u.Kappa)
	u.Lambda = lambda * ymax
	my := stats.Mean(ys)
	sst := 0.0
	for _, y := range ys {
		sst += (y - my) * (y - my)
	}
	if sst > 0 {
		u.R2 = 1 - e/sst
	}
	u.PeakLoad = math.Inf(1)
	if u.Kappa > 0 && u.Sigma < 1 {
		u.PeakLoad = math.Sqrt((1 - u.Sigma) / u.Kappa)
		u.PeakThroughput = u.Predict(u.PeakLoad)
	}
	u.Good = u.R2 >= USLMinR2 && u.Points >= USLMinPoints
	return u, true
}
