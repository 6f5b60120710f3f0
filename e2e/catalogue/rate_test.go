package catalogue

import (
	"fmt"
	"testing"
)

// Catalogue cases of how a load command's steps ran: a fixed rate not kept, a window too
// short, Little's law broken.
func init() {
	stress := func(extra ...string) func(t *testing.T, env *catEnv) (string, string) {
		return func(t *testing.T, env *catEnv) (string, string) {
			return catRun(t, env, append([]string{"stress", "--cluster", env.Cluster(t).Name}, extra...)...)
		}
	}
	// A query of at least 5 ms on four threads does at most 800/s: 2000/s cannot be kept on
	// any machine, 50/s can as long as a query takes under 80 ms on average. One thread left
	// 20 ms, and a busy machine (p50 18.5 ms, p99 217 ms of a pg_sleep(0.005), run beside
	// two whole test suites) missed the control's 50/s by 11%. A pause of the machine in the
	// middle of the window is made up (four threads start the late operations at once), but
	// one of d seconds at its end is not: the operations due in it were never started, d/W of
	// a window of W seconds. In 2 s a pause of 0.2 s reaches the limit of 10%
	// (analyze.RateShortfallLimit); the control's window is 6 s, which a pause of 0.6 s
	// reaches.
	addCase(catalogueCase{
		Verdict: "rate-not-kept",
		Name:    "stress --rate 2000 on four threads of a 5 ms query (pg_sleep(0.005))",
		Invalid: stress("-q", "SELECT pg_sleep(0.005)", "--threads", "4", "--rate", "2000", "--duration", "2s"),
		Control: stress("-q", "SELECT pg_sleep(0.005)", "--threads", "4", "--rate", "50", "--duration", "6s"),
	})
	// The limit is analyze.MinWindowSec (60 s, the shortest window that is not mostly
	// warm-up; the article asks for minutes): the control runs a window of exactly that, at a
	// light fixed rate so that the minute costs little CPU on a shared machine.
	addCase(catalogueCase{
		Verdict: "window-short",
		Name:    "stress with a 2 s window (the limit is 60 s)",
		Invalid: stress("-q", "SELECT 1", "--threads", "1", "--rate", "20", "--duration", "2s"),
		Control: stress("-q", "SELECT 1", "--threads", "1", "--rate", "20", "--duration", fmt.Sprintf("%ds", 60)),
	})
	// Little's law: a session that ends itself one query in 20 makes its thread reconnect,
	// time spent outside any measured operation, so throughput × latency falls well short of
	// the threads kept busy. The control runs the same query shape without ending its session.
	addCase(catalogueCase{
		Verdict: "littles-law",
		Name:    "stress whose query ends its own session one time in 20 (threads reconnect outside the operations)",
		Invalid: stress("-q", "SELECT CASE WHEN $1 % 20 = 0 THEN pg_terminate_backend(pg_backend_pid()) END",
			"--param-range", "1:100", "--threads", "2", "--duration", "3s", "--max-errors", "0"),
		Control: stress("-q", "SELECT CASE WHEN $1 % 20 = 0 THEN pg_backend_pid() > 0 END",
			"--param-range", "1:100", "--threads", "2", "--duration", "3s", "--max-errors", "0"),
	})
}
