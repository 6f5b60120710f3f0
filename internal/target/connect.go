package target

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/result"
)

// Connect opens one session, named appName (application_name) when not "". The error names
// the server without its password.
func Connect(ctx context.Context, cs, appName string) (*pgx.Conn, error) {
	return ConnectTraced(ctx, cs, appName, nil)
}

// ConnectTraced is Connect with a tracer of the session's queries (nil: none).
func ConnectTraced(ctx context.Context, cs, appName string, tracer pgx.QueryTracer) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(cs)
	if err != nil {
		return nil, fmt.Errorf("connection string %q: %w", result.Redact(cs), err)
	}
	if appName != "" {
		cfg.RuntimeParams["application_name"] = appName
	}
	cfg.DialFunc = dialBlocking
	if tracer != nil {
		cfg.Tracer = tracer
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = ConnectTimeout
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("connect to %s:%d: no session within %s (connect_timeout: the server is busy, or does not answer): %w", cfg.Host, cfg.Port, cfg.ConnectTimeout, err)
	}
	if err != nil {
		return nil, fmt.Errorf("connect to %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	return c, nil
}

// Landing is where a session landed.
type Landing struct {
	// Node is the server's cluster_name (agbench names each node so), else its address.
	Node       string
	Addr       string
	InRecovery bool
}

// Land asks the server where the session is: cluster_name, its address and port, and
// whether it is in recovery (a standby).
func Land(ctx context.Context, c *pgx.Conn) (Landing, error) {
	var l Landing
	var host *string
	var port *int
	err := c.QueryRow(ctx, `SELECT current_setting('cluster_name'), host(inet_server_addr()), inet_server_port(), pg_is_in_recovery()`).
		Scan(&l.Node, &host, &port, &l.InRecovery)
	if err != nil {
		return l, fmt.Errorf("where did the session land: %w", err)
	}
	if host != nil && port != nil {
		l.Addr = *host + ":" + strconv.Itoa(*port)
	} else {
		l.Addr = "local"
	}
	if l.Node == "" {
		l.Node = l.Addr
	}
	return l, nil
}

// Settings that matter to a benchmark, recorded in every result.
var Settings = []string{
	"shared_buffers", "effective_cache_size", "work_mem", "max_connections", "synchronous_commit",
	"synchronous_standby_names", "fsync", "wal_level", "max_wal_size", "checkpoint_timeout",
	"huge_pages", "jit", "max_parallel_workers_per_gather", "effective_io_concurrency", "hot_standby",
}

// ServerInfo reads the server's version and Settings.
func ServerInfo(ctx context.Context, c *pgx.Conn) (*result.Server, error) {
	s := &result.Server{Settings: map[string]string{}}
	var num string
	if err := c.QueryRow(ctx, `SELECT version(), current_setting('server_version_num')`).Scan(&s.Version, &num); err != nil {
		return nil, err
	}
	s.VersionNum, _ = strconv.Atoi(num)
	rows, err := c.Query(ctx, `SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1)`, Settings)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		s.Settings[k] = v
	}
	return s, rows.Err()
}

// WaitReplayed waits until every standby has replayed the primary's current WAL position,
// so that what was just written there can be read on them.
func (t *Target) WaitReplayed(ctx context.Context, timeout time.Duration) error {
	if len(t.Standbys) == 0 {
		return nil
	}
	p, err := Connect(ctx, t.Primary, "agbench")
	if err != nil {
		return err
	}
	var lsn string
	err = p.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn)
	p.Close(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, cs := range t.Standbys {
		s, err := Connect(ctx, cs, "agbench")
		if err != nil {
			return err
		}
		for {
			var done bool
			err = s.QueryRow(ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, lsn).Scan(&done)
			if err != nil || done {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		s.Close(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("wait for standby replay: %w", err)
		}
	}
	return nil
}
