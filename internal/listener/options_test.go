package listener

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
)

func TestParsePatroniURLs(t *testing.T) {
	got, err := ParsePatroniURLs("http://127.0.0.1:8008, https://db2:8008/")
	if err != nil || strings.Join(got, " ") != "http://127.0.0.1:8008 https://db2:8008" {
		t.Fatalf("%v, %v", got, err)
	}
	for _, bad := range []string{"", "127.0.0.1:8008", "ftp://h:1", "http://", "http://h:1/?x=1", "http://h:1,"} {
		if _, err := ParsePatroniURLs(bad); !agerr.IsBadInput(err) {
			t.Errorf("%q: %v, want bad input", bad, err)
		}
	}
}

// FuzzParsePatroniURLs: --patroni never panics, and what it accepts are http(s) URLs.
func FuzzParsePatroniURLs(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8008", "http://a:1,https://b:2/", "%zz", "http://[::1]:8008"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		urls, err := ParsePatroniURLs(s)
		if err != nil {
			return
		}
		for _, u := range urls {
			if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				t.Fatalf("%q accepted %q", s, u)
			}
		}
	})
}

// options are the defaults of `agbench listener`'s flags, with a primary.
func options() Options {
	return Options{Primary: "postgres://u@127.0.0.1:5432/db", Listen: DefaultListen, Routing: "on", Consistency: "eventual",
		Forward: "auto", ProbeInterval: DefaultProbeInterval, StartupTimeout: DefaultStartupTimeout, CausalWait: DefaultCausalWait}
}

func TestOptionsConfig(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*Options)
		check func(Config) bool
		errs  []string // what the bad input must say; none: no error
	}{
		{name: "a primary and a standby, named and not", edit: func(o *Options) {
			o.Primary, o.Standbys = "p=postgres://u@db1:5432/app", []string{"host=db2 port=5433 user=u"}
		}, check: func(c Config) bool {
			return len(c.Backends) == 2 && c.Backends[0].Name == "p" && c.Backends[0].Addr == "db1:5432" &&
				c.Backends[1].Name == "db2:5433" && c.Routing && c.Listen == DefaultListen && c.Consistency == Eventual
		}},
		{name: "one list for any primary and one for a node", edit: func(o *Options) {
			o.Primary, o.Standbys = "primary=postgres://u@127.0.0.1:5432/db", []string{"standby1=postgres://u@127.0.0.1:5433/db"}
			o.RoutingLists = []string{"('standby1','primary')", "standby1=('primary')"}
		}, check: func(c Config) bool {
			return c.RoutingList == "('standby1','primary')" && c.RoutingLists["standby1"] == "('primary')"
		}},
		{name: "routing off, session consistency, user forwarding", edit: func(o *Options) {
			o.Routing, o.Consistency, o.Forward, o.MaxLag = "off", "session", "user", 5*time.Second
		}, check: func(c Config) bool {
			return !c.Routing && c.Consistency == Session && c.Forward == ForwardUser && c.MaxLag == 5*time.Second
		}},
		{name: "patroni URLs in the order of the nodes", edit: func(o *Options) {
			o.Standbys, o.Patroni = []string{"postgres://u@127.0.0.1:5433/db"}, "http://127.0.0.1:8008,http://127.0.0.1:8009/"
		}, check: func(c Config) bool {
			return c.Backends[0].PatroniURL == "http://127.0.0.1:8008" && c.Backends[1].PatroniURL == "http://127.0.0.1:8009"
		}},
		{name: "no target", edit: func(o *Options) { o.Primary = "" }, errs: []string{"give --cluster NAME, or --primary URL"}},
		{name: "a cluster and a primary", edit: func(o *Options) { o.Cluster = "lab" }, errs: []string{"one or the other"}},
		{name: "every bad setting at once", edit: func(o *Options) {
			o.Routing, o.MaxLag, o.TLSCert, o.Listen, o.Consistency = "maybe", -time.Second, "x.pem", "bogus", "strong"
			o.CausalWait, o.Forward, o.ProbeInterval, o.StartupTimeout = -time.Second, "fast", 0, 0
		}, errs: []string{`--routing "maybe"`, "--max-lag -1s", "--tls-cert and --tls-key go together", `--listen "bogus"`,
			`--consistency: consistency "strong"`, "--causal-wait -1s: must be positive", `--forward "fast"`,
			"--probe-interval 0s: must be positive", "--startup-timeout 0s: must be positive"}},
		{name: "a Unix socket", edit: func(o *Options) { o.Primary = "host=/var/run/postgresql" }, errs: []string{"Unix socket"}},
		{name: "two lists for any primary", edit: func(o *Options) { o.RoutingLists = []string{"('a')", "('b')"} },
			errs: []string{`--routing-list "('b')": a second list for any primary`}},
		{name: "tls required without a certificate", edit: func(o *Options) { o.TLSRequire = true },
			errs: []string{"--tls-require needs --tls-cert and --tls-key"}},
		{name: "patroni URLs not one per node", edit: func(o *Options) { o.Patroni = "http://a:1,http://b:2" },
			errs: []string{"--patroni: 2 URL(s) for 1 node(s)"}},
		{name: "patroni with a cluster", edit: func(o *Options) { o.Primary, o.Cluster, o.Patroni = "", "lab", "http://a:1" },
			errs: []string{"--patroni with --cluster"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := options()
			c.edit(&o)
			cfg, err := o.Config(nil)
			if len(c.errs) == 0 {
				if err != nil || !c.check(cfg) {
					t.Fatalf("%+v, %v", cfg, err)
				}
				return
			}
			if !agerr.IsBadInput(err) {
				t.Fatalf("%v; want bad input", err)
			}
			for _, w := range c.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

// A cluster's recorded addresses and routing list hold unless their flags are given.
func TestOptionsConfigOfACluster(t *testing.T) {
	topo := &cluster.Topology{Name: "lab", Superuser: "admin", Database: "postgres", PassFile: filepath.Join(t.TempDir(), "pgpass"),
		Nodes: []cluster.Node{{Name: "primary", Role: cluster.RolePrimary, Host: "127.0.0.1", Port: 6500},
			{Name: "standby1", Role: cluster.RoleStandby, Host: "127.0.0.1", Port: 6501}},
		Listener: &cluster.ListenerInfo{Listen: "127.0.0.1:7000", Metrics: "127.0.0.1:7002", RoutingList: "('standby1')"}}
	o := options()
	o.Primary, o.Cluster = "", "lab"
	cfg, err := o.Config(topo)
	if err != nil || cfg.Listen != "127.0.0.1:7000" || cfg.Metrics != "127.0.0.1:7002" || cfg.RoutingList != "('standby1')" || len(cfg.Backends) != 2 {
		t.Fatalf("recorded: %+v, %v", cfg, err)
	}
	o.Listen, o.Metrics, o.RoutingLists = "127.0.0.1:7100", "", []string{"('primary')"}
	o.Given = func(f string) bool { return f == "listen" || f == "metrics" || f == "routing-list" }
	cfg, err = o.Config(topo)
	if err != nil || cfg.Listen != "127.0.0.1:7100" || cfg.Metrics != "" || cfg.RoutingList != "('primary')" {
		t.Fatalf("given: %+v, %v", cfg, err)
	}
}
