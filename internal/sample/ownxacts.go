package sample

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/result"
)

// OwnXactTracer counts the transactions a session of agbench's own runs (its samplers',
// the stale-read probe's) as agbench's own (result.CountOwnXacts), so that server-side
// counts of the workload's transactions leave them out: every query outside a transaction
// block is one, and so is a batch (one Sync, one implicit transaction). Until Own names the
// session's server and database, the counts are held; a session that never names one (it
// landed on a server no count is taken of) counts nothing. One session, one goroutine.
type OwnXactTracer struct {
	key  string
	held int64
}

// Own names the key the session's transactions count under (result.OwnXactKey), and adds
// those held until now.
func (t *OwnXactTracer) Own(key string) {
	t.key = key
	if key != "" && t.held > 0 {
		result.CountOwnXacts(key, t.held)
		t.held = 0
	}
}

func (t *OwnXactTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	t.count()
	return ctx
}

func (t *OwnXactTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *OwnXactTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	t.count()
	return ctx
}

func (t *OwnXactTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (t *OwnXactTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (t *OwnXactTracer) count() {
	if t.key != "" {
		result.CountOwnXacts(t.key, 1)
	} else {
		t.held++
	}
}

// OwnXactKey is the key of a session's server and database (result.OwnXactKey).
func OwnXactKey(conn *pgx.Conn) string {
	return result.OwnXactKey(conn.PgConn().Conn().RemoteAddr().String(), conn.Config().Database)
}
