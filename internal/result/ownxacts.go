package result

import (
	"sync"
	"sync/atomic"
)

// agbench's own transactions on a server's database: its samplers' queries commit
// transactions that pg_stat_database counts with the workload's (a 10 Hz wait profile and
// a 1 Hz statistics read add about 700 a minute). Each sampler counts the transactions it
// sends here, per server and database (OwnXactKey), and a server-side count of the
// workload's transactions subtracts what was counted in its window: the one place they meet.
// The count is the process's, not a run's, on purpose: pg_stat_database counts the
// transactions of every session on the database, so a window leaves out those of every
// sampler of this process there, of its own run or of another run at the same time.
// It is safe for concurrent use.

var ownXacts sync.Map // OwnXactKey -> *atomic.Int64

// OwnXactKey names a server's database as the samplers see it: the server's address as
// dialled (host:port, or the socket's path) and the database's name.
func OwnXactKey(serverAddr, database string) string { return serverAddr + "/" + database }

// CountOwnXacts adds n transactions agbench itself ran on the key's database.
func CountOwnXacts(key string, n int64) {
	v, _ := ownXacts.LoadOrStore(key, new(atomic.Int64))
	v.(*atomic.Int64).Add(n)
}

// OwnXacts is how many transactions agbench itself has run on the key's database so far.
func OwnXacts(key string) int64 {
	if v, ok := ownXacts.Load(key); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}
