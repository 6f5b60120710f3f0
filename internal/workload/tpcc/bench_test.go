package tpcc

import (
	"testing"
	"time"
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
