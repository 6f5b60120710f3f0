package harness

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/cluster"
)

// Cluster is a throwaway cluster (a primary and its standbys) that a benchmark makes for
// itself on free loopback ports, in a folder of its own that is also the agbench home
// (AGBENCH_HOME) of its agbench commands, so that `--cluster NAME` finds it.
type Cluster struct {
	Topo *cluster.Topology
	// Home is the cluster's folder and the benchmark's work folder.
	Home string
	// Env is this process's environment with AGBENCH_HOME and the PG* variables that reach
	// the primary as its superuser, for agbench and the comparators that read libpq's
	// (pgbench, psql).
	Env []string
}

// StartCluster makes and starts a cluster named name of a primary and standbys hot
// standbys, async commit, with settings (key=value) on top of agbench's own.
func StartCluster(ctx context.Context, name string, standbys int, settings []string) (*Cluster, error) {
	port, err := FreePorts(standbys + 1)
	if err != nil {
		return nil, err
	}
	home, err := WorkDir(name)
	if err != nil {
		return nil, err
	}
	topo, err := cluster.Create(ctx, cluster.CreateOptions{Home: home, Name: name, Standbys: standbys,
		Commit: cluster.CommitAsync, BasePort: port, Settings: settings})
	if err != nil {
		os.RemoveAll(home)
		return nil, fmt.Errorf("create cluster: %w", err)
	}
	p := topo.Primary()
	env := append(os.Environ(), "AGBENCH_HOME="+home, "PGHOST="+p.Host, "PGPORT="+strconv.Itoa(p.Port),
		"PGUSER="+topo.Superuser, "PGDATABASE="+topo.Database, "PGPASSFILE="+topo.PassFile)
	return &Cluster{Topo: topo, Home: home, Env: env}, nil
}

// ConnString is the connection string to the primary's database db ("" for the cluster's
// own) as its superuser.
func (p *Cluster) ConnString(db string) string {
	return p.Topo.ConnString(p.Topo.Primary(), db)
}

// Close stops and removes the cluster and its folder.
func (p *Cluster) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Topo.Destroy(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "destroy the bench cluster:", err)
	}
	os.RemoveAll(p.Home)
}

// Password is the superuser's password, read from the cluster's own passfile (lines of
// host:port:db:user:password), for comparators that take it on their command line or in a
// file of their own (go-tpc, pgbouncer).
func (p *Cluster) Password() (string, error) {
	b, err := os.ReadFile(p.Topo.PassFile)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if parts := strings.SplitN(line, ":", 5); len(parts) == 5 {
			return parts[4], nil
		}
	}
	return "", fmt.Errorf("%s: no password line", p.Topo.PassFile)
}
