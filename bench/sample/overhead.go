package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/agbench/agbench/bench/harness"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/sample"
	"github.com/agbench/agbench/internal/stats"
)

var tpsRE = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// samplers are the database and OS samplers of a run, started and stopped around a step.
type samplers struct {
	pg *sample.PG
	os *sample.OSStep
}

func (s samplers) start(ctx context.Context, st *result.Step) error {
	if err := s.pg.Start(ctx, st); err != nil {
		return err
	}
	return s.os.Start(ctx, st)
}

func (s samplers) stop(ctx context.Context, st *result.Step) error {
	if err := s.os.Stop(ctx, st); err != nil {
		return err
	}
	return s.pg.Stop(ctx, st)
}

// overhead runs pgbench -S without and with the samplers, the order of the two rotated each
// round, and prints the medians, their ratio and the samplers' CPU as a share of a core.
func overhead(ctx context.Context, runs, secs, scale int) error {
	c, err := harness.StartCluster(ctx, "bench", 1, []string{"fsync=off"})
	if err != nil {
		return err
	}
	defer c.Close()
	pgbench := c.Topo.PG.Path("pgbench")
	if _, err := os.Stat(pgbench); err != nil {
		pgbench = "pgbench"
	}
	if _, _, err := harness.Run(ctx, c.Env, pgbench, "-i", "-q", "-s", strconv.Itoa(scale)); err != nil {
		return err
	}
	var nodes []sample.PGNode
	for i := range c.Topo.Nodes {
		nodes = append(nodes, sample.PGNode{Name: c.Topo.Nodes[i].Name, ConnString: c.Topo.ConnString(&c.Topo.Nodes[i], "")})
	}
	pg, err := sample.NewPG(ctx, nodes, sample.PGOptions{})
	if err != nil {
		return err
	}
	defer pg.Close(ctx)
	osStep, err := sample.NewOSStep(sample.OSConfig{Paths: []string{c.Topo.Primary().DataDir}}, 0)
	if err != nil {
		return err
	}
	s := samplers{pg: pg, os: osStep}
	tps := map[bool][]float64{}
	var samplerCPU, samplerWall time.Duration
	for r := 0; r < runs; r++ {
		for _, sampled := range harness.Rotate([]bool{false, true}, r) {
			st := &result.Step{Window: result.Window{Start: time.Now()}}
			cpu0, _ := sample.SelfCPU()
			if sampled {
				if err := s.start(ctx, st); err != nil {
					return err
				}
			}
			out, _, err := harness.Run(ctx, c.Env, pgbench, "-S", "-n", "-c", "2", "-j", "2", "-T", strconv.Itoa(secs))
			if sampled {
				if err := s.stop(ctx, st); err != nil {
					return err
				}
				cpu1, _ := sample.SelfCPU()
				samplerCPU, samplerWall = samplerCPU+cpu1-cpu0, samplerWall+time.Since(st.Window.Start)
			}
			if err != nil {
				return err
			}
			m := tpsRE.FindSubmatch(out)
			if m == nil {
				return fmt.Errorf("no tps in pgbench's output:\n%s", out)
			}
			t, _ := strconv.ParseFloat(string(m[1]), 64)
			tps[sampled] = append(tps[sampled], t)
		}
	}
	off, on := stats.Median(tps[false]), stats.Median(tps[true])
	fmt.Printf("pgbench -S -c 2, %d s runs, %d per side, interleaved: unsampled %v, sampled %v TPS\n", secs, runs, tps[false], tps[true])
	fmt.Printf("median TPS unsampled %.0f, sampled %.0f, ratio %.3f; the samplers used %.1f%% of a core\n",
		off, on, on/off, 100*samplerCPU.Seconds()/samplerWall.Seconds())
	return nil
}
