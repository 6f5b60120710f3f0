package sample

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/result"
)

// ownXactTracer counts the transactions the sampler's session runs (result.CountOwnXacts),
// so that server-side counts of the workload's transactions leave them out: every query
// outside a transaction block is one, and so is a batch (one Sync, one implicit
// transaction). The key is set once the session is made.
type ownXactTracer struct{ key string }

func (t *ownXactTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	t.count()
	return ctx
}

func (t *ownXactTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *ownXactTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	t.count()
	return ctx
}

func (t *ownXactTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (t *ownXactTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (t *ownXactTracer) count() {
	if t.key != "" {
		result.CountOwnXacts(t.key, 1)
	}
}

// ownXactKey is the key of a session's server and database (result.OwnXactKey).
func ownXactKey(conn *pgx.Conn) string {
	return result.OwnXactKey(conn.PgConn().Conn().RemoteAddr().String(), conn.Config().Database)
}
