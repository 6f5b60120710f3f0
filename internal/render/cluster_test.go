package render

import "testing"

// The listener's line names only the ports it has, and its pid only while it runs.
func TestListenerLine(t *testing.T) {
	for _, c := range []struct {
		li   Listener
		want string
	}{
		{Listener{Listen: "127.0.0.1:6432", ReadOnlyListen: "127.0.0.1:6433", Metrics: "127.0.0.1:6434", PID: 42, Running: true, LogFile: "/h/listener.log"},
			"listener: 127.0.0.1:6432, read-only port 127.0.0.1:6433, metrics http://127.0.0.1:6434/metrics · running (pid 42) · log /h/listener.log"},
		{Listener{Listen: "127.0.0.1:6432", PID: 42}, "listener: 127.0.0.1:6432 · not running"},
	} {
		if got := ListenerLine(c.li); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
