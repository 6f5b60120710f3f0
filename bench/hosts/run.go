package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/bench/harness"
	"github.com/agbench/agbench/internal/cluster"
)

const routingList = "(('standby1','primary'))"

// bench is one run: its settings, the clusters' home and the agbench commands' environment.
type bench struct {
	*settings
	home string
	env  []string
	load *os.File
}

func run(ctx context.Context, s *settings) error {
	home, err := harness.WorkDir("hosts")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	if s.out == "" {
		if s.out, err = os.MkdirTemp("", "agbench-bench-hosts-results."); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(s.out, 0o755); err != nil {
		return err
	}
	b := &bench{settings: s, home: home, env: append(os.Environ(), "AGBENCH_HOME="+home)}
	if b.load, err = os.Create(filepath.Join(s.out, "load.txt")); err != nil {
		return err
	}
	defer b.load.Close()
	harness.Header(os.Stdout, "read-only routing on modelled hosts, and what the budgets cost")
	defer b.destroy()
	for _, c := range s.clusters {
		if err := b.create(ctx, c); err != nil {
			return fmt.Errorf("cluster %s: %w", c, err)
		}
	}
	fmt.Fprintf(b.load, "load average before: %s\n", harness.LoadAverage())
	for r := 1; r <= s.rounds; r++ {
		for _, c := range s.clusters {
			for _, st := range b.statesOf(c) {
				if err := b.round(ctx, c, st, r); err != nil {
					return fmt.Errorf("round %d, %s (%s): %w", r, c, st, err)
				}
			}
		}
	}
	fmt.Fprintf(b.load, "load average after: %s\n", harness.LoadAverage())
	if err := summary(b); err != nil {
		return err
	}
	b.hostsAfter()
	harness.Footer(os.Stdout)
	fmt.Printf("\nresults: %s\n", s.out)
	return nil
}

// agbench runs agbench with the clusters' home; its output goes to the file named (or is
// dropped for "").
func (b *bench) agbench(ctx context.Context, outFile string, args ...string) error {
	c := exec.CommandContext(ctx, b.bin, args...)
	c.Env = b.env
	if outFile != "" {
		f, err := os.Create(outFile)
		if err != nil {
			return err
		}
		defer f.Close()
		c.Stdout, c.Stderr = f, f
		return c.Run()
	}
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("agbench %v: %v\n%s", args, err, out)
	}
	return nil
}

// create makes cluster c of a primary and one standby, shaped as its name says, and loads
// both tables.
func (b *bench) create(ctx context.Context, c string) error {
	port, err := harness.FreePorts(2)
	if err != nil {
		return err
	}
	args := []string{"cluster", "create", "--name", c, "--standbys", "1", "--base-port", strconv.Itoa(port),
		"--routing-list", routingList, "--set", "shared_buffers=32MB", "--set", "synchronize_seqscans=off"}
	model := []string{"--host-cpus", b.cpus, "--host-memory", b.memory, "--host-read-bps", b.readBPS, "--host-read-iops", b.iops}
	switch c {
	case "modelled":
		args = append(append(args, model...), "--host-cpu-shares", "auto")
	case "kweight":
		args = append(append(args, model...), "--host-cpu-shares", "kernel")
	}
	if err := b.agbench(ctx, "", args...); err != nil {
		return err
	}
	init := filepath.Join(b.out, "init")
	for _, table := range [][]string{{"--init", b.rows}, {"--init", b.smallRows, "--init-table", "small"}} {
		args := append(append([]string{"stress", "--cluster", c}, table...), "--query", "SELECT 1", "--iterations", "1",
			"--sample=false", "--results", init)
		if err := b.agbench(ctx, "", args...); err != nil {
			return err
		}
	}
	return b.agbench(ctx, filepath.Join(b.out, c+"-status.txt"), "cluster", "status", "--name", c)
}

// statesOf is the states a cluster is measured in: a cluster without budgets has none to
// lift.
func (b *bench) statesOf(c string) []string {
	if c == "shared" {
		return []string{"none"}
	}
	return b.states
}

// round measures every query on cluster c in state st.
func (b *bench) round(ctx context.Context, c, st string, r int) error {
	budgets := map[string]string{"on": "on", "lifted": "off"}[st]
	if budgets != "" {
		if err := b.agbench(ctx, "", "cluster", "hosts", "--name", c, "--budgets", budgets); err != nil {
			return err
		}
	}
	if err := b.warm(ctx, c); err != nil {
		return err
	}
	fmt.Fprintf(b.load, "round %d, %s (%s): %s load %s\n", r, c, st, time.Now().UTC().Format("15:04:05"), harness.LoadAverage())
	for _, q := range b.queries {
		name := fmt.Sprintf("%s-%s-%s-r%d", c, st, q, r)
		d, args := b.duration, []string{"--query", "SELECT c_balance FROM customer WHERE c_id = $1", "--param-range", "1:" + b.rows}
		switch q {
		case "count":
			d, args = b.countDuration, []string{"--query", "SELECT count(*) FROM customer"}
		case "small":
			args = []string{"--query", "SELECT count(*) FROM small"}
		}
		args = append(append([]string{"stress", "--cluster", c}, args...), "--threads", b.threads, "--duration", d,
			"--rampup", b.ramp, "--compare", "routing=off,on", "--results", filepath.Join(b.out, name))
		// A failed run leaves no result; the summary names it and its output file.
		_ = b.agbench(ctx, filepath.Join(b.out, name+".txt"), args...)
	}
	_ = b.agbench(ctx, filepath.Join(b.out, fmt.Sprintf("%s-%s-status-r%d.txt", c, st, r)), "cluster", "status", "--name", c)
	return ctx.Err()
}

// warm has each node read both tables once, so that no state starts with a cache the last
// one left.
func (b *bench) warm(ctx context.Context, c string) error {
	topo, err := cluster.Load(b.home, c)
	if err != nil {
		return err
	}
	for i := range topo.Nodes {
		conn, err := pgx.Connect(ctx, topo.ConnString(&topo.Nodes[i], ""))
		if err != nil {
			return err
		}
		for _, q := range []string{"SELECT count(*) FROM customer", "SELECT count(*) FROM small"} {
			if _, err := conn.Exec(ctx, q); err != nil {
				conn.Close(ctx)
				return err
			}
		}
		conn.Close(ctx)
	}
	return nil
}

// hostsAfter prints each modelled cluster's hosts, budgets on, after its last round.
func (b *bench) hostsAfter() {
	for _, c := range b.clusters {
		if c == "shared" {
			continue
		}
		text, err := os.ReadFile(filepath.Join(b.out, fmt.Sprintf("%s-on-status-r%d.txt", c, b.rounds)))
		if err != nil {
			continue
		}
		fmt.Printf("\n%s, budgets on, after its last round:\n", c)
		if i := indexLine(string(text), "hosts:"); i >= 0 {
			fmt.Print(string(text)[i:])
		}
	}
}

func (b *bench) destroy() {
	for _, c := range b.clusters {
		_ = b.agbench(context.Background(), "", "cluster", "destroy", "--name", c)
	}
}
