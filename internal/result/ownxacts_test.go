package result

import (
	"fmt"
	"sync"
	"testing"
)

// The count of agbench's own transactions is one per server and database for the whole
// process, on purpose: pg_stat_database counts every session's transactions, so a window's
// server TPM must leave out those of every sampler of the process on that database, its
// own run's or not. Samplers of concurrent runs (tests in parallel, a plan's runs) add to
// it at once; under -race this shows they may, and that no count is lost or crosses keys.
func TestOwnXactsConcurrentCounts(t *testing.T) {
	const goroutines, each = 8, 1000
	keys := []string{OwnXactKey("127.0.0.1:1", "a"), OwnXactKey("127.0.0.1:1", "b"), OwnXactKey("/tmp/.s.PGSQL.1", "a")}
	before := map[string]int64{}
	for _, k := range keys {
		before[k] = OwnXacts(k)
	}
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				for j, k := range keys {
					CountOwnXacts(k, int64(j+1))
					_ = OwnXacts(k)
				}
			}
		}()
	}
	wg.Wait()
	for j, k := range keys {
		if got, want := OwnXacts(k)-before[k], int64(goroutines*each*(j+1)); got != want {
			t.Errorf("%s: counted %d, want %d", k, got, want)
		}
	}
	if n := OwnXacts(fmt.Sprintf("never counted %p", t)); n != 0 {
		t.Errorf("a key never counted has %d", n)
	}
}
