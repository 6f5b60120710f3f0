package readahead

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/sample"
)

// Database is the database the experiment makes for its tables, and drops at the end.
const Database = "agbench_readahead"

// tablespace is the tablespace made on the private device.
const tablespace = "agbench_readahead"

// Conditions say what was possible on this machine, for the table and the result file.
type Conditions = result.ReadaheadConditions

// Experiment is the prepared experiment: tables built, device and settings in place.
// Close undoes everything Setup did.
type Experiment struct {
	cfg     Config
	srv     Server
	cond    Conditions
	vnum    int
	dev     *LoopDevice
	thr     *Throttle
	direct  bool // debug_io_direct = data in effect
	setIO   bool // agbench set debug_io_direct with ALTER SYSTEM and must reset it
	evict   bool // pg_buffercache_evict_all() exists
	made    bool // agbench created the database (and tablespace)
	tsMade  bool
	rels    []string // relation file paths, relative to the data directory
	ioDev   string   // the device whose /proc/diskstats counters are read: the private one, else the data directory's
	closers []func() error
}

// Setup prepares the experiment on srv: a private device when it can, direct IO where the
// version has it, the article's tables. A failed or interrupted set-up undoes what it did.
func Setup(ctx context.Context, srv Server, cfg Config) (_ *Experiment, err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Experiment{cfg: cfg, srv: srv}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Close())
		}
	}()
	if err := e.probe(ctx); err != nil {
		return nil, err
	}
	e.makeDevice(ctx)
	e.throttle()
	if err := e.directIO(ctx); err != nil {
		return nil, err
	}
	if err := e.build(ctx); err != nil {
		return nil, err
	}
	e.ioDev = e.cond.DeviceName
	if e.dev == nil {
		e.ioDev, _ = sample.DeviceForPath("/sys", srv.DataDir())
	}
	e.describe()
	return e, nil
}

// Conditions returns what the experiment could do on this machine.
func (e *Experiment) Conditions() Conditions { return e.cond }

// Config returns the effective configuration.
func (e *Experiment) Config() Config { return e.cfg }

func (e *Experiment) progress(format string, a ...any) {
	if e.cfg.Progress != nil {
		e.cfg.Progress(fmt.Sprintf(format, a...))
	}
}

func (e *Experiment) probe(ctx context.Context) error {
	c, err := e.srv.Connect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	var super bool
	err = c.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('server_version_num')::int,
		(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)`).Scan(&e.cond.ServerVersion, &e.vnum, &super)
	if err != nil {
		return err
	}
	if !super {
		return fmt.Errorf("readahead needs a superuser session (it restarts the server and changes debug_io_direct)")
	}
	e.cond.VersionNum = e.vnum
	e.cond.Rows = e.cfg.Rows
	return nil
}

// deviceSize is the loop device's size: room for both tables and their indexes with a
// margin (the file is sparse: unused space costs nothing).
func (e *Experiment) deviceSize() int64 {
	return max(1<<30, e.cfg.Rows*600)
}

func (e *Experiment) makeDevice(ctx context.Context) {
	switch {
	case e.cfg.Device == DeviceNone:
		e.cond.Device = "none (--device none): the server's data directory"
		return
	case e.srv.HasStandbys():
		e.cond.Device = "none: the cluster has standbys on this machine, which would replay a tablespace at the same path; use --pg-bin for a private server"
		return
	}
	uid, gid := e.srv.OSUser()
	e.progress("making a loop device (%d MB sparse file, ext4, direct IO to the backing file)", e.deviceSize()>>20)
	d, err := MakeLoopDevice(ctx, e.cfg.DeviceParent, e.deviceSize(), uid, gid)
	if err != nil {
		e.cond.Device = "none: " + err.Error()
		return
	}
	e.dev = d
	e.closers = append(e.closers, d.Close)
	e.cond.DeviceName, e.cond.Mount = d.Name, d.Mount
	e.cond.Device = fmt.Sprintf("%s: ext4 on a sparse file, attached with direct IO, mounted at %s; read_ahead_kb 0 (off) vs %d (on)",
		d.Device, d.Mount, e.cfg.ReadAheadKB)
}

func (e *Experiment) throttle() {
	if e.cfg.ThrottleIOPS == 0 {
		return
	}
	if e.dev == nil {
		e.cond.Throttle = "none: needs the private device, and there is none"
		return
	}
	t, err := ThrottleReads(e.dev.Major, e.dev.Minor, e.cfg.ThrottleIOPS)
	if err != nil {
		e.cond.Throttle = "none: " + err.Error()
		return
	}
	e.thr = t
	e.closers = append(e.closers, t.Close)
	e.cond.Throttle = fmt.Sprintf("%d read IOPS on %s (cgroup v1 blkio.throttle.read_iops_device)", e.cfg.ThrottleIOPS, e.dev.Name)
}

// directIO turns on debug_io_direct = data on 16 and later (a restart), so that the OS page
// cache holds none of the server's data and emptying shared buffers makes a cache cold.
func (e *Experiment) directIO(ctx context.Context) error {
	if e.vnum < 160000 {
		return nil
	}
	c, err := e.srv.Connect(ctx, "postgres")
	if err != nil {
		return err
	}
	var cur string
	err = c.QueryRow(ctx, "SELECT current_setting('debug_io_direct')").Scan(&cur)
	if err == nil && cur != "data" && !strings.Contains(cur, "data") {
		_, err = c.Exec(ctx, "ALTER SYSTEM SET debug_io_direct = 'data'")
		if err == nil {
			e.setIO = true
		}
	}
	c.Close(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	if e.setIO {
		e.progress("restart with debug_io_direct = data")
		if err := e.srv.Restart(ctx); err != nil {
			return err
		}
	}
	e.direct = true
	e.cond.DirectIO = true
	return nil
}

func (e *Experiment) build(ctx context.Context) error {
	c, err := e.srv.Connect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+Database); err != nil {
		return fmt.Errorf("drop a previous run's database: %w", err)
	}
	if _, err := c.Exec(ctx, "CREATE DATABASE "+Database); err != nil {
		return err
	}
	e.made = true
	tsClause := ""
	if e.dev != nil {
		loc := filepath.Join(e.dev.Mount, "ts")
		uid, gid := e.srv.OSUser()
		if err := os.Mkdir(loc, 0o700); err != nil {
			return err
		}
		if err := os.Chown(loc, uid, gid); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, fmt.Sprintf("CREATE TABLESPACE %s LOCATION '%s'", tablespace, strings.ReplaceAll(loc, "'", "''"))); err != nil {
			return err
		}
		e.tsMade = true
		tsClause = " TABLESPACE " + tablespace
	}
	d, err := e.srv.Connect(ctx, Database)
	if err != nil {
		return err
	}
	defer d.Close(context.WithoutCancel(ctx))
	start := time.Now()
	e.progress("loading %d rows into %s and %s", e.cfg.Rows, Table1, Table2)
	for _, s := range schemaSQL(e.cfg.Rows, e.cfg.Seed, tsClause) {
		if _, err := d.Exec(ctx, s); err != nil {
			return fmt.Errorf("build tables: %s: %w", firstLine(s), err)
		}
	}
	e.progress("loaded in %.1f s", time.Since(start).Seconds())
	if e.vnum >= 180000 {
		if _, err := d.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_buffercache"); err == nil {
			var ok bool
			if d.QueryRow(ctx, "SELECT to_regproc('pg_buffercache_evict_all') IS NOT NULL").Scan(&ok) == nil && ok {
				e.evict = true
			}
		}
	}
	rows, err := d.Query(ctx, `SELECT relname, pg_relation_filepath(oid), pg_relation_size(oid)
		FROM pg_class WHERE relname = ANY($1) ORDER BY relname`, relationNames)
	if err != nil {
		return err
	}
	e.cond.Relations = map[string]int64{}
	for rows.Next() {
		var name, path string
		var size int64
		if err := rows.Scan(&name, &path, &size); err != nil {
			return err
		}
		e.rels = append(e.rels, path)
		e.cond.Relations[name] = size
	}
	return rows.Err()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i > 0 {
		s = s[:i]
	}
	return s
}

func (e *Experiment) describe() {
	c := &e.cond
	onConc := strconv.Itoa(e.cfg.IOConcurrency)
	switch {
	case e.vnum >= 170000:
		c.SequentialPrefetch = "PostgreSQL's read streams (sequential and bitmap heap scans; reads combined up to io_combine_limit)"
		c.PrefetchOff = "effective_io_concurrency = 0, io_combine_limit = 1"
		c.PrefetchOn = "effective_io_concurrency = " + onConc + ", io_combine_limit = default"
	default:
		c.SequentialPrefetch = "the kernel's read-ahead (PostgreSQL prefetches bitmap heap scans only)"
		c.PrefetchOff = "effective_io_concurrency = 0"
		c.PrefetchOn = "effective_io_concurrency = " + onConc
	}
	if e.dev != nil {
		c.PrefetchOff += ", read_ahead_kb = 0"
		c.PrefetchOn += fmt.Sprintf(", read_ahead_kb = %d", e.cfg.ReadAheadKB)
	} else if e.vnum < 170000 {
		c.Notes = append(c.Notes, "sequential read-ahead could not be turned off (no private device): range and full scans compare like with like")
	}
	switch {
	case e.direct && e.evict:
		c.ColdMethod = "direct IO (debug_io_direct = data) and pg_buffercache_evict_all() before each run"
	case e.direct:
		c.ColdMethod = "direct IO (debug_io_direct = data) and a server restart before each run"
	default:
		c.ColdMethod = "a server restart, then fsync and posix_fadvise(DONTNEED) of every relation file, before each run"
	}
	if e.cfg.DropCaches {
		c.ColdMethod += ", and the whole OS page cache dropped (--drop-caches)"
	}
	switch {
	case e.vnum >= 160000:
		c.IOSource = "pg_stat_io"
		if e.vnum < 180000 {
			c.IOSource += " (counts pages: average IO size is the page size)"
		}
	case e.dev != nil:
		c.IOSource = "/proc/diskstats of " + e.dev.Name
	case e.ioDev != "":
		c.IOSource = "/proc/diskstats of " + e.ioDev + ", the data directory's device, shared: other processes' reads count too"
	default:
		c.IOSource = "none (PostgreSQL 15 has no pg_stat_io and there is no private device)"
	}
}

// Close undoes Setup: drops the database and tablespace, resets debug_io_direct, removes
// the throttle, unmounts and detaches the device. It runs to the end after Ctrl-C and
// returns every error it met.
func (e *Experiment) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var errs []error
	if e.made || e.setIO {
		c, err := e.srv.Connect(ctx, "postgres")
		if err != nil {
			// Interrupted in a restart: start the server again to undo what is in it.
			if rerr := e.srv.Restart(ctx); rerr == nil {
				c, err = e.srv.Connect(ctx, "postgres")
			}
		}
		if err != nil {
			errs = append(errs, err)
		} else {
			if e.made {
				if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+Database+" WITH (FORCE)"); err != nil {
					errs = append(errs, err)
				} else {
					e.made = false
				}
			}
			if e.tsMade && !e.made {
				if _, err := c.Exec(ctx, "DROP TABLESPACE IF EXISTS "+tablespace); err != nil {
					errs = append(errs, err)
				} else {
					e.tsMade = false
				}
			}
			if e.setIO {
				if _, err := c.Exec(ctx, "ALTER SYSTEM RESET debug_io_direct"); err != nil {
					errs = append(errs, err)
				}
			}
			c.Close(ctx)
		}
		if e.setIO {
			if err := e.srv.Restart(ctx); err != nil {
				errs = append(errs, err)
			}
			e.setIO = false
		}
	}
	for i := len(e.closers) - 1; i >= 0; i-- {
		if err := e.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	e.closers = nil
	return errors.Join(errs...)
}

// sortedKeys returns a map's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// conn is a measuring session, set up for one run.
func (e *Experiment) session(ctx context.Context, q Query, prefetch bool) (*pgx.Conn, error) {
	c, err := e.srv.Connect(ctx, Database)
	if err != nil {
		return nil, err
	}
	set := map[string]string{}
	for k, v := range sessionSettings {
		set[k] = v
	}
	for k, v := range q.Settings {
		set[k] = v
	}
	if prefetch {
		set["effective_io_concurrency"] = strconv.Itoa(e.cfg.IOConcurrency)
	} else {
		set["effective_io_concurrency"] = "0"
		if e.vnum >= 170000 {
			set["io_combine_limit"] = "1"
		}
	}
	for _, k := range sortedKeys(set) {
		if _, err := c.Exec(ctx, fmt.Sprintf("SET %s = '%s'", k, set[k])); err != nil {
			c.Close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("SET %s: %w", k, err)
		}
	}
	return c, nil
}
