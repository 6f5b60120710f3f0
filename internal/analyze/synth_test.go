package analyze

import (
	"math"
	"math/rand/v2"

	"github.com/agbench/agbench/internal/stats"
)

// machineRepair returns throughput (per second) and mean response time (seconds) of a
// closed system: n users, each thinking z seconds between requests, served by c servers of
// rate mu (the finite-source M/M/c queue, solved exactly from its birth-death chain).
func machineRepair(n, c int, mu, z float64) (x, r float64) {
	if z == 0 { // everyone is always at the station
		x = float64(min(n, c)) * mu
		return x, float64(n) / x
	}
	logp := make([]float64, n+1) // log of unnormalised state probabilities, to avoid overflow
	for k := 0; k < n; k++ {
		logp[k+1] = logp[k] + math.Log(float64(n-k)/z) - math.Log(float64(min(k+1, c))*mu)
	}
	top := logp[0]
	for _, v := range logp {
		top = math.Max(top, v)
	}
	sum := 0.0
	for _, v := range logp {
		sum += math.Exp(v - top)
	}
	for k, v := range logp {
		x += math.Exp(v-top) / sum * float64(min(k, c)) * mu
	}
	return x, float64(n)/x - z
}

// mmcSweep is a sweep over loads of a machine-repair system, with latencies in ms and the
// tail approximated as a multiple of the mean.
func mmcSweep(loads []int, c int, mu, z float64) []Step {
	var out []Step
	for _, n := range loads {
		x, r := machineRepair(n, c, mu, z)
		out = append(out, Step{Load: float64(n), Throughput: x, MeanMs: r * 1000, P50Ms: r * 700,
			P95Ms: r * 3000, P99Ms: r * 4600, P999Ms: r * 6900, ThinkMs: z * 1000, WindowSec: 300})
	}
	return out
}

// uslSweep is a sweep that follows the USL exactly.
func uslSweep(loads []float64, lambda, sigma, kappa float64) []Step {
	u := USL{Lambda: lambda, Sigma: sigma, Kappa: kappa}
	var out []Step
	for _, n := range loads {
		x := u.Predict(n)
		out = append(out, Step{Load: n, Throughput: x, MeanMs: n / x * 1000, P99Ms: 3 * n / x * 1000, WindowSec: 300})
	}
	return out
}

// noisy multiplies throughput by 1+e, e uniform in ±amp, repeats times per step, from seed.
func noisy(steps []Step, amp float64, repeats int, seed uint64) []Step {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]Step, len(steps))
	for i, s := range steps {
		s.Repeats = make([]float64, repeats)
		for r := range s.Repeats {
			s.Repeats[r] = s.Throughput * (1 + amp*(2*rng.Float64()-1))
		}
		s.Throughput = stats.Mean(s.Repeats)
		out[i] = s
	}
	return out
}

var doubling = []int{1, 2, 4, 8, 16, 32, 64, 128}

func floats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
