package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// The tests of a cluster built without agbench that do not change it share one: a primary
// and a standby, made by hand (initdb, pg_basebackup -R, SCRAM, an ordinary login). Each
// names its own result folders and agbench home; only one builds tpcc tables.
func TestHandmade(t *testing.T) {
	clustertest.Require(t)
	h := clustertest.NewHandmade(t, 1)
	for _, c := range []struct {
		name string
		test func(*testing.T, *clustertest.Handmade)
	}{
		{"TargetsAreCheckedBeforeLoad", targetsAreCheckedBeforeLoad},
		{"ConnectionStringsTakeNames", connectionStringsTakeNames},
		{"RunsOfOneSecondKeepTheirResults", runsOfOneSecondKeepTheirResults},
		{"TPCCSessionsTakeTheTargetsNames", tpccSessionsTakeTheTargetsNames},
		{"ListenerRefusesARefusedLogin", listenerRefusesARefusedLogin},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, h)
		})
	}
}

// Against a cluster built without agbench (initdb, pg_basebackup -R, SCRAM, an ordinary
// login), every server is checked before any load: a --primary that is a standby, a
// --standby that is a primary, a database that does not exist and a refused login are bad
// input (exit 2) that name the flag and the server, and nothing is written.
func targetsAreCheckedBeforeLoad(t *testing.T, h *clustertest.Handmade) {
	home := t.TempDir()
	env := map[string]string{"AGBENCH_HOME": home}
	primary, standby := h.ConnString(0, clustertest.HandmadeApp), h.ConnString(1, clustertest.HandmadeApp)
	wrongPW := strings.Replace(primary, "password="+clustertest.HandmadeAppPW, "password=wrong", 1)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"primary is a standby", []string{"stress", "--primary", standby, "-q", "SELECT 1"}, "--primary host=127.0.0.1"},
		{"primary is a standby (tpcc run)", []string{"tpcc", "run", "--primary", standby, "--duration", "1s"}, "is a standby"},
		{"primary is a standby (tpcc build)", []string{"tpcc", "build", "--primary", standby}, "is a standby"},
		{"standby is a primary", []string{"stress", "--primary", primary, "--standby", primary, "-q", "SELECT 1"}, "--standby host=127.0.0.1"},
		{"no such database", []string{"stress", "--primary", primary, "-d", "nosuchdb", "-q", "SELECT 1"}, "does not exist"},
		{"no such database (scan)", []string{"scan", "--primary", primary, "-d", "nosuchdb"}, "does not exist"},
		{"wrong password", []string{"stress", "--primary", wrongPW, "-q", "SELECT 1"}, "refused the login"},
	} {
		t.Run(c.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results")
			args := c.args
			if c.args[1] != "build" {
				args = append(args, "--results", results)
			}
			code, out, errs := e2etest.Run(t, env, args...)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, want 2 and %q in stderr:\n%s\n%s", code, c.want, errs, out)
			}
			if strings.Contains(errs, clustertest.HandmadeAppPW) || strings.Contains(errs, "password=wrong") {
				t.Errorf("a password is in the message: %s", errs)
			}
			if _, err := os.Stat(results); !os.IsNotExist(err) {
				t.Errorf("results folder made for bad input: %v", err)
			}
		})
	}
	// "primary is a standby" names what the server is.
	_, _, errs := e2etest.Run(t, env, "stress", "--primary", standby, "-q", "SELECT 1")
	if !strings.Contains(errs, "is a standby (pg_is_in_recovery() is true)") {
		t.Errorf("stderr %q", errs)
	}
}

// NAME=URL names the servers of connection strings in the result, as the listener names
// them; read intent lands on the standby; an ordinary login runs the load.
func connectionStringsTakeNames(t *testing.T, h *clustertest.Handmade) {
	results := t.TempDir()
	code, out, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "stress",
		"--primary", "east="+h.URL(0, clustertest.HandmadeApp), "--standby", "west="+h.URL(1, clustertest.HandmadeApp),
		"--intent", "ro", "-q", "SELECT 1", "--threads", "2", "--iterations", "20", "--results", results)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	files, _ := filepath.Glob(filepath.Join(results, "*", result.FileName))
	if len(files) != 1 {
		t.Fatalf("results %v", files)
	}
	res, err := result.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range res.Meta.Topology.Nodes {
		names = append(names, n.Name+":"+n.Role)
	}
	if strings.Join(names, ",") != "east:primary,west:standby" {
		t.Errorf("topology nodes %v", names)
	}
	for _, st := range res.Steps {
		for _, s := range st.Sessions {
			if !s.InRecovery {
				t.Errorf("read-intent session landed on the primary: %+v", s)
			}
		}
	}
	b, _ := os.ReadFile(files[0])
	if strings.Contains(string(b), clustertest.HandmadeAppPW) {
		t.Error("the result file holds a password")
	}
}

// Three runs started in the same second keep three results, each in its own folder.
func runsOfOneSecondKeepTheirResults(t *testing.T, h *clustertest.Handmade) {
	results := t.TempDir()
	env := map[string]string{"AGBENCH_HOME": t.TempDir()}
	codes := make(chan int, 3)
	for i := 0; i < 3; i++ {
		go func() {
			code, _, _ := e2etest.Run(t, env, "stress", "--primary", h.ConnString(0, clustertest.HandmadeApp), "-q", "SELECT 1",
				"--iterations", "20", "--sample=false", "--results", results)
			codes <- code
		}()
	}
	for i := 0; i < 3; i++ {
		if code := <-codes; code != 0 {
			t.Fatalf("a run exited %d", code)
		}
	}
	files, _ := filepath.Glob(filepath.Join(results, "*", result.FileName))
	if len(files) != 3 {
		t.Fatalf("3 runs kept %d results: %v", len(files), files)
	}
}

// tpcc run names its sessions, the VUs' and the read-intent ones, as the target names the
// nodes (NAME=URL), as stress does: the report's sessions table can then set each beside its
// topology role (it named them 127.0.0.1/32:PORT, with no topology role, before).
func tpccSessionsTakeTheTargetsNames(t *testing.T, h *clustertest.Handmade) {
	env := map[string]string{"AGBENCH_HOME": t.TempDir()}
	if code, out, errs := e2etest.Run(t, env, "tpcc", "build", "--primary", h.URL(0, clustertest.HandmadeApp), "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	results := t.TempDir()
	code, out, errs := e2etest.Run(t, env, "tpcc", "run", "--primary", "east="+h.URL(0, clustertest.HandmadeApp),
		"--standby", "west="+h.URL(1, clustertest.HandmadeApp), "--read-intent", "--vus", "1", "--duration", "1s", "--rampup", "0s",
		"--sample=false", "--results", results)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	files, _ := filepath.Glob(filepath.Join(results, "*", result.FileName))
	res, err := result.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range res.Steps[0].Sessions {
		got = append(got, fmt.Sprintf("%s:%v", s.Node, s.InRecovery))
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "east:false,west:true" {
		t.Errorf("sessions %v, want east (primary) and west (standby)", got)
	}
}

// The listener in front of a hand-made cluster: a connection string whose login or database
// a server refuses is bad input naming the flag and the server (it ran with the node "down: server
// refused TLS connection" before); a node down now is not, since it may come up later.
func listenerRefusesARefusedLogin(t *testing.T, h *clustertest.Handmade) {
	wrongPW := strings.Replace(h.URL(0, clustertest.HandmadeApp), clustertest.HandmadeAppPW, "wrong", 1)
	noDB := strings.Replace(h.URL(1, clustertest.HandmadeApp), "/"+clustertest.HandmadeDatabase+"?", "/nodb?", 1)
	p := e2etest.Start(t, nil, "listener", "--primary", "p="+wrongPW, "--standby", "s="+noDB, "--listen", "127.0.0.1:0")
	code := p.Wait(t, 30*time.Second) // a listener that starts runs until stopped
	out, errs := p.Stdout.String(), p.Stderr.String()
	if code != 2 || !strings.Contains(errs, "--primary") || !strings.Contains(errs, "refused the login") ||
		!strings.Contains(errs, "--standby") || !strings.Contains(errs, "database does not exist") || strings.Contains(errs, "wrong") {
		t.Fatalf("exit %d, want 2 naming both\n%s\n%s", code, out, errs)
	}
}
