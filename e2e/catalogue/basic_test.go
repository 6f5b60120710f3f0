package catalogue

import "testing"

// Catalogue cases of the verdicts every load command shares.
func init() {
	addCase(catalogueCase{
		Verdict: "errors",
		Name:    "stress whose query fails on one parameter in 20 (division by zero)",
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			res := env.Results(t)
			_, out := env.Run(t, "stress", "--cluster", env.Cluster(t).Name, "--query", "SELECT 1/($1 % 20)",
				"--param-range", "1:100", "--threads", "1", "--rate", "500", "--duration", "2s", "--results", res)
			return out, res
		},
		Control: func(t *testing.T, env *catEnv) (string, string) {
			res := env.Results(t)
			_, out := env.Run(t, "stress", "--cluster", env.Cluster(t).Name, "--query", "SELECT 1/(1 + $1 % 2)",
				"--param-range", "1:100", "--threads", "1", "--rate", "500", "--duration", "2s", "--results", res)
			return out, res
		},
	})
}
