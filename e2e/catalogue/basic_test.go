package catalogue

import "testing"

// Catalogue cases of the verdicts every load command shares. The query that fails on one
// parameter in 20 runs 300 times (a run with no failure: 0.95^300, about 1 in 5 million):
// a 2 s run made 47 operations at a load of 50 on 2 cores, and none failed, which happens 1
// time in 11.
func init() {
	addCase(catalogueCase{
		Verdict: "errors",
		Name:    "stress whose query fails on one parameter in 20 (division by zero)",
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			res := env.Results(t)
			_, out := env.Run(t, "stress", "--cluster", env.Cluster(t).Name, "--query", "SELECT 1/($1 % 20)",
				"--param-range", "1:100", "--threads", "1", "--rate", "500", "--iterations", "300", "--results", res)
			return out, res
		},
		Control: func(t *testing.T, env *catEnv) (string, string) {
			res := env.Results(t)
			_, out := env.Run(t, "stress", "--cluster", env.Cluster(t).Name, "--query", "SELECT 1/(1 + $1 % 2)",
				"--param-range", "1:100", "--threads", "1", "--rate", "500", "--iterations", "300", "--results", res)
			return out, res
		},
	})
}
