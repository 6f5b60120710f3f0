package catalogue

import (
	"strings"
	"testing"
)

// Catalogue case of a step that ran to its end but is incomplete (incomplete): more than 1%
// of its operations failed (one parameter in 20 divides by zero), so its figures describe
// the failures as much as the load. The step says why, the run exits 1, and the knee,
// saturation and Little's law leave it out. The control's query never fails.
func init() {
	run := func(t *testing.T, env *catEnv, query string) (int, string, string) {
		res := env.Results(t)
		code, out := env.Run(t, "stress", "--cluster", env.Cluster(t).Name, "--query", query,
			"--param-range", "1:100", "--threads", "1", "--rate", "500", "--iterations", "300", "--results", res)
		return code, out, res
	}
	addCase(catalogueCase{
		Verdict: "incomplete",
		Name:    "stress whose query fails on one parameter in 20 (division by zero): more than 1% of its operations lost",
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			code, out, res := run(t, env, "SELECT 1/($1 % 20)")
			if code != 1 || !strings.Contains(out, "operations lost to errors") || strings.Contains(out, "characteristic latency") {
				t.Errorf("a step that lost 5%% of its operations: exit %d, want 1, its reason, and no knee drawn from it:\n%s", code, out)
			}
			return out, res
		},
		Control: func(t *testing.T, env *catEnv) (string, string) {
			code, out, res := run(t, env, "SELECT 1/(1 + $1 % 2)")
			if code != 0 {
				t.Errorf("control: exit %d\n%s", code, out)
			}
			return out, res
		},
	})
}
