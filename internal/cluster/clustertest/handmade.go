package clustertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/pgbin"
)

// Handmade is a primary and hot standbys built the way a DBA builds them, without
// agbench's cluster code: initdb with SCRAM logins, pg_ctl, pg_basebackup -R. It has a
// superuser (admin) and an ordinary application login (app, owner of database app, with
// no pg_monitor or pg_read_all_stats), no cluster_name, and no agbench topology file.
// Node 0 is the primary.
type Handmade struct {
	Dir   string
	Ports []int
	pg    *pgbin.Install
	user  *pgbin.OSUser
}

// Logins of a hand-made cluster.
const (
	HandmadeAdmin    = "admin"
	HandmadeAdminPW  = "admin-secret"
	HandmadeApp      = "app"
	HandmadeAppPW    = "app-secret"
	HandmadeDatabase = "app"
)

// NewHandmade builds and starts a primary and standbys hot standbys on free loopback
// ports in a temporary folder, all stopped and removed when the test ends.
func NewHandmade(t testing.TB, standbys int) *Handmade {
	t.Helper()
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pg, err := pgbin.Find(ctx, os.Getenv("AGBENCH_PG_BIN"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := pgbin.ResolveOSUser("")
	if err != nil {
		t.Fatal(err)
	}
	dir := Home(t)
	if err := u.Own(dir); err != nil {
		t.Fatal(err)
	}
	base, err := FreePorts(standbys + 1)
	if err != nil {
		t.Fatal(err)
	}
	h := &Handmade{Dir: dir, pg: pg, user: u}
	for i := 0; i <= standbys; i++ {
		h.Ports = append(h.Ports, base+i)
	}
	stopAll := func() {
		for i := range h.Ports {
			_ = h.Stop(context.Background(), i)
		}
	}
	stopped := whileRunning(stopAll)
	t.Cleanup(func() {
		defer stopped()
		stopAll()
	})
	h.initPrimary(ctx, t)
	for i := 1; i <= standbys; i++ {
		h.cloneStandby(ctx, t, i)
	}
	for i := 1; i <= standbys; i++ {
		h.waitStreaming(ctx, t, i)
	}
	return h
}

// DataDir is node i's data folder.
func (h *Handmade) DataDir(i int) string { return filepath.Join(h.Dir, fmt.Sprintf("node%d", i)) }

// ConnString is a keyword/value connection string to node i as user (admin or app), to the
// app database.
func (h *Handmade) ConnString(i int, user string) string {
	pw := HandmadeAppPW
	if user == HandmadeAdmin {
		pw = HandmadeAdminPW
	}
	return fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=%s sslmode=disable", h.Ports[i], user, pw, HandmadeDatabase)
}

// URL is node i as a postgres:// URL for user.
func (h *Handmade) URL(i int, user string) string {
	pw := HandmadeAppPW
	if user == HandmadeAdmin {
		pw = HandmadeAdminPW
	}
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", user, pw, h.Ports[i], HandmadeDatabase)
}

func (h *Handmade) run(ctx context.Context, t testing.TB, tool string, args ...string) {
	t.Helper()
	if out, err := h.pg.Run(ctx, h.user, tool, args...); err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, out)
	}
}

func (h *Handmade) initPrimary(ctx context.Context, t testing.TB) {
	t.Helper()
	pwfile := filepath.Join(h.Dir, "pw")
	if err := os.WriteFile(pwfile, []byte(HandmadeAdminPW+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.user.Own(pwfile); err != nil {
		t.Fatal(err)
	}
	h.run(ctx, t, "initdb", "-D", h.DataDir(0), "-U", HandmadeAdmin, "--pwfile", pwfile, "--auth", "scram-sha-256", "-E", "UTF8", "--locale", "C")
	conf := fmt.Sprintf("\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nfsync = off\n"+
		"max_connections = 60\nhot_standby = on\nmax_wal_senders = 10\n", h.Ports[0], h.Dir)
	h.appendConf(t, 0, conf)
	h.Start(ctx, t, 0)
	c := h.connect(ctx, t, 0, HandmadeAdmin, "postgres")
	defer c.Close(ctx)
	for _, q := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", HandmadeApp, HandmadeAppPW),
		fmt.Sprintf("CREATE DATABASE %s OWNER %s", HandmadeDatabase, HandmadeApp),
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func (h *Handmade) appendConf(t testing.TB, i int, conf string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(h.DataDir(i), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(conf); err != nil {
		t.Fatal(err)
	}
}

func (h *Handmade) cloneStandby(ctx context.Context, t testing.TB, i int) {
	t.Helper()
	cmd := h.user.Command(ctx, h.pg.Path("pg_basebackup"), "-h", "127.0.0.1", "-p", fmt.Sprint(h.Ports[0]), "-U", HandmadeAdmin,
		"-D", h.DataDir(i), "-R", "-X", "stream", "-c", "fast")
	cmd.Env = append(cmd.Env, "PGPASSWORD="+HandmadeAdminPW)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	h.appendConf(t, i, fmt.Sprintf("\nport = %d\n", h.Ports[i]))
	h.Start(ctx, t, i)
}

// Start starts node i and waits until it accepts connections.
func (h *Handmade) Start(ctx context.Context, t testing.TB, i int) {
	t.Helper()
	h.run(ctx, t, "pg_ctl", "-D", h.DataDir(i), "-l", filepath.Join(h.Dir, fmt.Sprintf("node%d.log", i)), "-w", "-t", "120", "start")
}

// Stop stops node i (fast shutdown); it is no error when it is not running.
func (h *Handmade) Stop(ctx context.Context, i int) error {
	if _, err := os.Stat(filepath.Join(h.DataDir(i), "postmaster.pid")); err != nil {
		return nil
	}
	_, err := h.pg.Run(ctx, h.user, "pg_ctl", "-D", h.DataDir(i), "-m", "fast", "-w", "-t", "120", "stop")
	return err
}

// Promote promotes standby i and waits until it accepts writes (safe to call from any
// goroutine: it returns the error rather than failing the test).
func (h *Handmade) Promote(ctx context.Context, i int) error {
	out, err := h.pg.Run(ctx, h.user, "pg_ctl", "-D", h.DataDir(i), "-w", "-t", "120", "promote")
	if err != nil {
		return fmt.Errorf("promote node %d: %w\n%s", i, err, out)
	}
	return nil
}

func (h *Handmade) connect(ctx context.Context, t testing.TB, i int, user, db string) *pgx.Conn {
	t.Helper()
	cs := strings.Replace(h.ConnString(i, user), "dbname="+HandmadeDatabase, "dbname="+db, 1)
	var c *pgx.Conn
	var err error
	for try := 0; try < 50; try++ {
		if c, err = pgx.Connect(ctx, cs); err == nil {
			return c
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("connect to node %d as %s: %v", i, user, err)
	return nil
}

// Admin opens a superuser session to node i's app database.
func (h *Handmade) Admin(ctx context.Context, t testing.TB, i int) *pgx.Conn {
	t.Helper()
	return h.connect(ctx, t, i, HandmadeAdmin, HandmadeDatabase)
}

// waitStreaming waits until the primary reports standby i streaming.
func (h *Handmade) waitStreaming(ctx context.Context, t testing.TB, i int) {
	t.Helper()
	c := h.connect(ctx, t, 0, HandmadeAdmin, "postgres")
	defer c.Close(ctx)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'").Scan(&n); err == nil && n >= i {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("standby %d is not streaming", i)
}

// WhileLagForgotten calls window while the primary's standbys are caught up and idle, when
// pg_stat_replication has forgotten their lag times (replay_lag NULL: after two standby
// replies without WAL, one per wal_receiver_status_interval, set to 1 s on each standby
// here). The server writes WAL of its own now and then (the background writer's snapshot of
// running transactions, up to 15 s after the last write): a window with WAL in it had no
// idle standby, and is called again, until one had none or the context ends.
func (h *Handmade) WhileLagForgotten(ctx context.Context, t testing.TB, window func()) {
	t.Helper()
	admin := h.Admin(ctx, t, 0)
	defer admin.Close(context.Background())
	for i := 1; i < len(h.Ports); i++ {
		c := h.Admin(ctx, t, i)
		for _, q := range []string{"ALTER SYSTEM SET wal_receiver_status_interval = '1s'", "SELECT pg_reload_conf()"} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		c.Close(context.Background())
	}
	walAt := func() string {
		var lsn string
		if err := admin.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&lsn); err != nil {
			t.Fatal(err)
		}
		return lsn
	}
	for {
		before := walAt()
		waited := time.Now()
		for {
			var forgotten bool
			if err := admin.QueryRow(ctx, "SELECT coalesce(bool_and(replay_lag IS NULL), false) FROM pg_stat_replication").Scan(&forgotten); err != nil {
				t.Fatal(err)
			}
			if forgotten {
				t.Logf("replay_lag forgotten after %.1f s", time.Since(waited).Seconds())
				break
			}
			if ctx.Err() != nil {
				t.Fatal("the standbys' replay_lag still shown without WAL when the test's time ran out")
			}
			time.Sleep(200 * time.Millisecond)
		}
		window()
		after := walAt()
		if before == after {
			return
		}
		t.Logf("WAL written while the standbys were to be idle (%s to %s): measuring again", before, after)
		if ctx.Err() != nil {
			t.Fatal("no window without WAL in the test's time")
		}
	}
}
