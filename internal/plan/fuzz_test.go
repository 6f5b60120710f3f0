package plan

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParse: any bytes either parse into a plan whose experiments all have a command, or
// fail with errors that each name the file, a line and a column.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("target: {connect: {primary: p, standbys: [a]}}\nexperiments: [{command: stress, flags: {threads: [1,2]}}]\n"))
	f.Add([]byte("target: [\n"))
	f.Add([]byte("&a [*a]"))
	f.Add([]byte("experiments: [&x {command: s}, *x]\ntarget: {cluster: {settings: {a: 1}}}"))
	f.Add([]byte("target: {connect: {primary: p}, host_metrics: {node_exporter: {a: u}, prometheus: x, instances: {b: i}}}\nexperiments: [{command: stress}]\n"))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f.yaml", data)
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				var l, c int
				if n, _ := fmt.Sscanf(strings.TrimPrefix(line, "f.yaml:"), "%d:%d:", &l, &c); n != 2 || l < 1 || c < 1 || !strings.HasPrefix(line, "f.yaml:") {
					t.Fatalf("error line without a position: %q", line)
				}
			}
			return
		}
		if len(p.Experiments) == 0 || (p.Target.Cluster == nil) == (p.Target.Connect == nil) {
			t.Fatalf("accepted a plan without experiments or target: %+v", p)
		}
		for i, e := range p.Experiments {
			if len(e.Command) == 0 {
				t.Fatalf("experiment %d has no command", i)
			}
			_ = p.Args(i, "s", "r", func(string) bool { return true })
		}
	})
}
