package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
)

const good = `name: ror-quick
description: the study, small
results: out
report: study.html
target:
  cluster:
    name: rq
    standbys: 1
    commit: sync
    base_port: 6710
    listener: 127.0.0.1:6720
    settings:
      shared_buffers: 64MB
      max_connections: 50
experiments:
  - name: stress
    command: stress
    flags:
      threads: [1, 2, 4]
      iterations: 20
      compare: routing=off,on
      query: "SELECT count(*) FROM customer"
  - command: agbench tpcc run
    flags: {vus: 2, duration: 5s}
  - command: disk
    flags: {threads: [1, 10]}
    args: ["{study}/disk.dat"]
`

func TestParseGood(t *testing.T) {
	p, err := Parse("p.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	c := p.Target.Cluster
	if p.Name != "ror-quick" || p.Results != "out" || p.Report != "study.html" || c == nil || c.Name != "rq" || c.Standbys != 1 ||
		c.Commit != "sync" || c.BasePort != 6710 || c.Listener != "127.0.0.1:6720" || len(c.Settings) != 2 || c.Settings[1].Key != "max_connections" {
		t.Fatalf("%+v %+v", p, c)
	}
	if len(p.Experiments) != 3 || p.Experiments[1].Label() != "tpcc-run" || p.Experiments[0].Pos != (Pos{16, 5}) {
		t.Fatalf("experiments %+v", p.Experiments)
	}
	has := func(f string) bool { return f != "standby" }
	got := strings.Join(p.Args(0, "S", "S/01-stress", has), " ")
	want := "stress --threads=1,2,4 --iterations=20 --compare=routing=off,on --query=SELECT count(*) FROM customer --cluster=rq --results=S/01-stress"
	if got != want {
		t.Fatalf("args\n got %s\nwant %s", got, want)
	}
	if got := strings.Join(p.Args(2, "S", "S/03-disk", func(f string) bool { return f == "results" }), " "); got != "disk --threads=1,10 --results=S/03-disk S/disk.dat" {
		t.Fatalf("disk args %s", got)
	}
	if got := strings.Join(c.CreateArgs(), " "); got != "cluster create --name=rq --standbys=1 --commit=sync --base-port=6710 --listener=127.0.0.1:6720 --set=shared_buffers=64MB --set=max_connections=50" {
		t.Fatalf("create %s", got)
	}
}

func TestParseDefaultsAndConnect(t *testing.T) {
	p, err := Parse("dir/my-study.yaml", []byte(`
target:
  connect:
    primary: postgres://u@db1/app
    standbys: [postgres://u@db2/app, postgres://u@db3/app]
    listener: host=lb port=6432
experiments:
  - command: stress
    flags: {threads: 4, standby: [a, b]}
  - command: stress
    name: two
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "my-study" || p.Results != DefaultResults || p.Report != DefaultReport || p.Target.Connect == nil {
		t.Fatalf("%+v", p)
	}
	all := func(string) bool { return true }
	// The experiment set --standby itself: the target adds nothing; repeatable flags repeat.
	if got := strings.Join(p.Args(0, "S", "R", all), " "); got != "stress --threads=4 --standby=a --standby=b --results=R" {
		t.Fatalf("args %s", got)
	}
	got := strings.Join(p.Args(1, "S", "R", all), " ")
	if got != "stress --primary=postgres://u@db1/app --standby=postgres://u@db2/app --standby=postgres://u@db3/app --listener=host=lb port=6432 --results=R" {
		t.Fatalf("args %s", got)
	}
	if s := p.Target.Summary(); strings.Contains(s, "db1") {
		t.Fatalf("summary shows a connection string: %s", s)
	}
	p, err = Parse("x.yaml", []byte("target: {cluster: }\nexperiments: [{command: stress}]\n"))
	if err != nil || p.Target.Cluster.Standbys != 1 || p.Target.Cluster.BasePort != DefaultBasePort || p.Target.Cluster.Commit != "async" {
		t.Fatalf("cluster defaults %+v %v", p, err)
	}
}

// Every error path of the parser: the message and the exact line:column it points at.
func TestParseErrors(t *testing.T) {
	const exp = "experiments: [{command: stress}]\n"
	const tgt = "target: {cluster: {}}\n"
	for _, c := range []struct {
		name, text string
		want       []string // "line:col: substring"
	}{
		{"syntax", "target: [\n", []string{"1:1: not valid YAML"}},
		{"syntax later", "name: a\ntarget: {\n  x: ]\n", []string{"2:1: not valid YAML"}},
		{"tab", "target:\n\t- x\n", []string{"2:1: not valid YAML"}},
		{"empty", "", []string{"1:1: the plan is empty"}},
		{"comment only", "# nothing\n", []string{"1:1: the plan is empty"}},
		{"not a mapping", "- a\n- b\n", []string{"1:1: the plan must be a mapping"}},
		{"scalar plan", "hello\n", []string{`1:1: the plan must be a mapping of keys to values, not "hello"`}},
		{"key not a name", tgt + exp + "[a]: 1\n", []string{"3:1: plan: a key must be a name"}},
		{"key twice", tgt + exp + "name: a\nname: b\n", []string{`4:1: plan: "name" given twice`}},
		{"unknown key", tgt + exp + "experiment: []\n", []string{`3:1: plan: unknown key "experiment" (known: description, experiments, name, report, results, target)`}},
		{"bad name", tgt + exp + "name: a/b\n", []string{`3:7: name "a/b"`}},
		{"name not text", tgt + exp + "name: [x]\n", []string{"3:7: name: give a text value, not a list"}},
		{"name null", tgt + exp + "name:\n", []string{"3:6: name: give a text value, not nothing"}},
		{"results empty", tgt + exp + "results: ''\n", []string{"3:10: results: give a folder"}},
		{"report path", tgt + exp + "report: a/b.html\n", []string{`3:9: report "a/b.html": give a file name ending in .html`}},
		{"report ext", tgt + exp + "report: r.txt\n", []string{`3:9: report "r.txt"`}},
		{"description", tgt + exp + "description: {a: 1}\n", []string{"3:14: description: give a text value, not a mapping"}},
		{"no target", exp, []string{"1:1: plan: no target"}},
		{"no experiments", tgt, []string{"1:1: plan: no experiments"}},
		{"both missing", "name: x\n", []string{"1:1: plan: no target", "1:1: plan: no experiments"}},
		{"target list", "target: [a]\n" + exp, []string{"1:9: target must be a mapping"}},
		{"target neither", "target: {}\n" + exp, []string{"1:9: target: give exactly one of cluster"}},
		{"target both", "target: {cluster: {}, connect: {primary: x}}\n" + exp, []string{"1:9: target: give exactly one of cluster"}},
		{"target unknown", "target: {clutser: {}}\n" + exp, []string{`1:10: target: unknown key "clutser" (known: cluster, connect, host_metrics)`, "1:9: target: give exactly one"}},
		{"cluster list", "target: {cluster: [1]}\n" + exp, []string{"1:19: target.cluster must be a mapping"}},
		{"cluster name", "target: {cluster: {name: 'a b'}}\n" + exp, []string{`1:26: target.cluster.name "a b"`}},
		{"standbys range", "target: {cluster: {standbys: 10}}\n" + exp, []string{"1:30: target.cluster.standbys 10: give 0 to 9"}},
		{"standbys negative", "target: {cluster: {standbys: -1}}\n" + exp, []string{"1:30: target.cluster.standbys -1"}},
		{"standbys text", "target: {cluster: {standbys: two}}\n" + exp, []string{`1:30: target.cluster.standbys: give a whole number, not "two"`}},
		{"standbys float", "target: {cluster: {standbys: 1.5}}\n" + exp, []string{"1:30: target.cluster.standbys: give a whole number"}},
		{"standbys huge", "target: {cluster: {standbys: 99999999999999999999}}\n" + exp, []string{"1:30: target.cluster.standbys: give a whole number"}},
		{"commit", "target: {cluster: {commit: remote}}\n" + exp, []string{`1:28: target.cluster.commit "remote": give sync or async`}},
		{"base port", "target: {cluster: {base_port: 80}}\n" + exp, []string{"1:31: target.cluster.base_port 80"}},
		{"listener address", "target: {cluster: {listener: localhost}}\n" + exp, []string{`1:30: target.cluster.listener "localhost": give true or an address host:port`}},
		{"listener list", "target: {cluster: {listener: [a]}}\n" + exp, []string{"1:30: target.cluster.listener: give a text value"}},
		{"settings list", "target: {cluster: {settings: [a]}}\n" + exp, []string{"1:30: target.cluster.settings must be a mapping"}},
		{"settings key", "target: {cluster: {settings: {[a]: 1}}}\n" + exp, []string{"1:31: target.cluster.settings: a key must be a setting's name"}},
		{"settings twice", "target:\n  cluster:\n    settings:\n      a: 1\n      a: 2\n" + exp, []string{`5:7: target.cluster.settings: "a" given twice`}},
		{"settings value", "target: {cluster: {settings: {a: [1]}}}\n" + exp, []string{"1:34: target.cluster.settings.a: give one value, not a list"}},
		{"settings null", "target: {cluster: {settings: {a: }}}\n" + exp, []string{"target.cluster.settings.a: give one value, not nothing"}},
		{"keep", "target: {cluster: {keep: yes}}\n" + exp, []string{`1:26: target.cluster.keep: give true or false, not "yes"`}},
		{"reuse", "target: {cluster: {reuse: 1}}\n" + exp, []string{"1:27: target.cluster.reuse: give true or false"}},
		{"connect scalar", "target: {connect: x}\n" + exp, []string{`1:19: target.connect must be a mapping`}},
		{"connect no primary", "target: {connect: {listener: x}}\n" + exp, []string{"1:19: target.connect: give the primary's connection string"}},
		{"connect standbys", "target: {connect: {primary: p, standbys: s}}\n" + exp, []string{`1:42: target.connect.standbys: give a list of connection strings, not "s"`}},
		{"connect standby element", "target: {connect: {primary: p, standbys: [[s]]}}\n" + exp, []string{"1:43: target.connect.standbys: give a text value, not a list"}},
		{"experiments map", tgt + "experiments: {a: 1}\n", []string{"2:14: experiments: give a list of experiments, not a mapping"}},
		{"experiments empty", tgt + "experiments: []\n", []string{"2:14: experiments: the list is empty"}},
		{"experiment scalar", tgt + "experiments: [stress]\n", []string{`2:15: experiments[1] must be a mapping of keys to values, not "stress"`}},
		{"experiment unknown key", tgt + "experiments: [{command: stress, flag: {}}]\n", []string{`2:33: experiments[1]: unknown key "flag" (known: args, command, flags, name)`}},
		{"experiment no command", tgt + "experiments:\n  - name: a\n", []string{"3:5: experiments[1]: no command"}},
		{"experiment empty command", tgt + "experiments: [{command: ' '}]\n", []string{"2:25: experiments[1].command: give a command"}},
		{"experiment command list", tgt + "experiments: [{command: [a]}]\n", []string{"2:25: experiments[1].command: give a text value, not a list"}},
		{"experiment name", tgt + "experiments: [{command: stress, name: 'x y'}]\n", []string{`2:39: experiments[1].name "x y"`}},
		{"experiment twice", tgt + "experiments:\n  - command: stress\n  - command: scan\n  - command: stress\n", []string{`5:5: experiments[3]: a second experiment named "stress" (the first is at line 3)`}},
		{"flags list", tgt + "experiments: [{command: stress, flags: [a]}]\n", []string{"2:40: experiments[1].flags must be a mapping"}},
		{"flag name", tgt + "experiments: [{command: stress, flags: {'Threads!': 1}}]\n", []string{`2:41: experiments[1].flags: "Threads!" is not a flag name`}},
		{"flag twice", tgt + "experiments: [{command: stress, flags: {threads: 1, --threads: 2}}]\n", []string{"2:53: experiments[1].flags: --threads given twice"}},
		{"flag null", tgt + "experiments: [{command: stress, flags: {threads: }}]\n", []string{"experiments[1].flags.threads: give a value (true for a switch)"}},
		{"flag empty list", tgt + "experiments: [{command: stress, flags: {threads: []}}]\n", []string{"2:50: experiments[1].flags.threads: the list is empty"}},
		{"flag list element", tgt + "experiments: [{command: stress, flags: {threads: [1, [2]]}}]\n", []string{"2:54: experiments[1].flags.threads: each element must be one value, not a list"}},
		{"flag mapping", tgt + "experiments: [{command: stress, flags: {threads: {a: 1}}}]\n", []string{"2:50: experiments[1].flags.threads: give a value or a list of values, not a mapping"}},
		{"args scalar", tgt + "experiments: [{command: disk, args: f}]\n", []string{`2:37: experiments[1].args: give a list of arguments, not "f"`}},
		{"args element", tgt + "experiments: [{command: disk, args: [{a: 1}]}]\n", []string{"2:38: experiments[1].args: give a text value, not a mapping"}},
		{"alias", tgt + "experiments: [&a {command: stress}, *a]\n", []string{"2:37: experiments[2] must be a mapping of keys to values, not an alias"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(c.text))
			if err == nil {
				t.Fatalf("no error for\n%s", c.text)
			}
			if !agerr.IsBadInput(err) {
				t.Fatalf("not bad input: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), "p.yaml:"+w) && !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
				if strings.Count(w, ":") >= 2 && !strings.Contains(err.Error(), "p.yaml:"+w) {
					t.Errorf("error lacks position p.yaml:%s:\n%v", w, err)
				}
			}
			// Every line of the error names the file, a line and a column.
			for _, line := range strings.Split(err.Error(), "\n") {
				var l, col int
				if n, _ := fmt.Sscanf(strings.TrimPrefix(line, "p.yaml:"), "%d:%d:", &l, &col); n != 2 || l < 1 || col < 1 {
					t.Errorf("line without a position: %q", line)
				}
			}
		})
	}
}

// fakeCatalog knows two commands and types their flags like cobra would.
type fakeCatalog map[string]map[string]string // command -> flag -> "int" | "string" | "duration"

func (f fakeCatalog) Command(w []string) bool { _, ok := f[strings.Join(w, " ")]; return ok }
func (f fakeCatalog) HasFlag(w []string, flag string) bool {
	_, ok := f[strings.Join(w, " ")][flag]
	return ok
}
func (f fakeCatalog) CheckFlag(w []string, flag, v string) error {
	switch f[strings.Join(w, " ")][flag] {
	case "int":
		var n int
		if _, err := fmt.Sscanf(v, "%d", &n); err != nil || fmt.Sprint(n) != v {
			return errors.New("not a whole number")
		}
	}
	return nil
}

func TestCheck(t *testing.T) {
	cat := fakeCatalog{"stress": {"threads": "string", "iterations": "int", "results": "string"}, "tpcc run": {"vus": "string"}}
	p, err := Parse("p.yaml", []byte(`target: {cluster: {}}
experiments:
  - command: stress
    flags: {threads: [1, 2], iterations: 20}
  - command: tpcc run
    flags: {vus: 4}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(cat); err != nil {
		t.Fatal(err)
	}
	p, err = Parse("p.yaml", []byte(`target: {cluster: {}}
experiments:
  - command: strss
  - command: stress
    flags:
      threds: 4
      iterations: many
  - command: tpcc
`))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Check(cat)
	if !agerr.IsBadInput(err) {
		t.Fatalf("not bad input: %v", err)
	}
	for _, w := range []string{
		`p.yaml:3:5: experiments[1]: "strss" is not an agbench command that runs`,
		`p.yaml:6:15: experiments[2] (stress): stress has no flag --threds`,
		`p.yaml:7:19: experiments[2] (stress): --iterations "many": not a whole number`,
		`p.yaml:8:5: experiments[3]: "tpcc" is not an agbench command that runs`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("lacks %q:\n%v", w, err)
		}
	}
}
