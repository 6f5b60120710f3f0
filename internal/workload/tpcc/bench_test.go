package tpcc

import (
	"context"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// BenchmarkGenerateWarehouse measures the generators alone: the rows of one warehouse.
func BenchmarkGenerateWarehouse(b *testing.B) {
	gen := &Generator{Seed: 1, Now: time.Now()}
	for i := 0; i < b.N; i++ {
		for _, td := range gen.warehouseTables(1) {
			for td.src.Next() {
				_, _ = td.src.Values()
			}
		}
	}
}

// BenchmarkTransactions runs the deck's transactions on a real server (one warehouse), one
// VU, in each mode, and reports the driver's allocations and statements per transaction.
func BenchmarkTransactions(b *testing.B) {
	clustertest.Require(b)
	topo := clustertest.New(b, clustertest.Options{})
	ctx := context.Background()
	cfg, err := ConnConfig(topo.ConnString(topo.Primary(), ""), "--primary")
	if err != nil {
		b.Fatal(err)
	}
	rep, err := Build(ctx, cfg, BuildOptions{Warehouses: 1, Loaders: 1, Seed: 5})
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []Mode{ModeFunctions, ModeClient} {
		b.Run(string(mode), func(b *testing.B) {
			conn, err := Connect(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(ctx)
			g := NewRand(1, 2)
			s := &Session{Primary: conn, Mode: mode, T: &Terminal{G: g, C: RunConstants(g, rep.Constants), Warehouses: 1, HomeW: 1, HomeD: 1}}
			deck := NewDeck(g)
			stmts := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out, err := s.Run(ctx, deck.Next())
				if err != nil {
					b.Fatal(err)
				}
				stmts += out.Statements
			}
			b.ReportMetric(float64(stmts)/float64(b.N), "statements/tx")
		})
	}
}
