package drill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/units"
)

// FaultWALFull is the primary's WAL file system full. For the drill, the primary's pg_wal
// is moved onto a small ext4 file system of its own (a file on a loop device, mounted in
// the cluster's folder); each cycle fills it with a ballast file and switches WAL segments
// until the server needs a new one and cannot write it (PostgreSQL PANICs, or refuses
// writes), then frees the space; the server recovers where it is (restart_after_crash, or
// agbench starts it again if its postmaster stopped), as a DBA would after freeing the
// disk. No failover. At the end the WAL goes back into the data folder.
const FaultWALFull = "wal-full"

// Bounds of the WAL file system.
const (
	DefaultWALFSSize = 128 << 20
	MinWALFSSize     = 64 << 20
	MaxWALFSSize     = 4 << 30
	// walSegment is the room a WAL segment takes (PostgreSQL's default segment size).
	walSegment = 16 << 20
	// fullWait bounds the wait for the server to notice its WAL file system is full.
	fullWait = 60 * time.Second
	// switchEvery is how often the fault switches WAL segments while the disk is full.
	switchEvery = 50 * time.Millisecond
)

// walFSTools are the programs a wal-full drill runs.
var walFSTools = []string{"mkfs.ext4", "mount", "umount"}

// checkWALFull says what keeps a wal-full fault from being injected here: not root, no
// loop device, a missing tool, a size out of bounds, or a primary whose pg_wal is a link
// already (its own file system, which agbench must not fill).
func checkWALFull(t *cluster.Topology) []error {
	var errs []error
	if os.Geteuid() != 0 {
		errs = append(errs, agerr.BadInputf("--fault wal-full needs root: it mounts a small file system (a loop device) for the primary's pg_wal"))
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		errs = append(errs, agerr.BadInputf("--fault wal-full needs a loop device: %v (modprobe loop; in a container, give it /dev/loop-control and /dev/loop*)", err))
	}
	for _, tool := range walFSTools {
		if _, err := exec.LookPath(tool); err != nil {
			errs = append(errs, agerr.BadInputf("--fault wal-full needs %s: not found on PATH (Debian: apt-get install e2fsprogs mount)", tool))
		}
	}
	p := t.Primary()
	if fi, err := os.Lstat(filepath.Join(p.DataDir, "pg_wal")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		to, _ := os.Readlink(filepath.Join(p.DataDir, "pg_wal"))
		errs = append(errs, agerr.BadInputf("cluster %s: %s's pg_wal is a link already (to %s): a wal-full drill puts its own file system there, and fills no file system it did not make", t.Name, p.Name, to))
	}
	return errs
}

// validateWALFS checks the size of the WAL file system.
func validateWALFS(size int64) error {
	if size < MinWALFSSize || size > MaxWALFSSize {
		return agerr.BadInputf("--wal-fs-size %s: want %s to %s", units.FormatBytes(size), units.FormatBytes(MinWALFSSize), units.FormatBytes(MaxWALFSSize))
	}
	return nil
}

// walFS is the small file system under a node's pg_wal.
type walFS struct {
	node         string
	image, mnt   string
	pgwal, saved string
	uid, gid     int
	// sized names the WAL settings the drill set with ALTER SYSTEM, with the value that
	// postgresql.auto.conf held before ("" for none: RESET at the end).
	sized map[string]string
}

// walSizes are the settings that bound the WAL a server keeps: on a small WAL file system a
// DBA sizes them to it, or the recycled segments alone fill it.
var walSizes = []string{"max_wal_size", "min_wal_size"}

// sizeWAL sets max_wal_size to a quarter of the file system and min_wal_size to two segments when
// the server's are larger (ALTER SYSTEM: applied by the restart that follows), keeping what
// postgresql.auto.conf held, for the end. It returns what it set ("" when nothing).
func (w *walFS) sizeWAL(ctx context.Context, t *cluster.Topology, n *cluster.Node, size int64) (string, error) {
	c, err := t.Connect(ctx, n)
	if err != nil {
		return "", err
	}
	defer c.Close(context.WithoutCancel(ctx))
	want := map[string]int64{"max_wal_size": max(size/4, 2*walSegment) >> 20, "min_wal_size": 2 * walSegment >> 20}
	var set []string
	w.sized = map[string]string{}
	for _, name := range walSizes {
		var mb int64
		if err := c.QueryRow(ctx, `SELECT setting::bigint FROM pg_settings WHERE name = $1 AND unit = 'MB'`, name).Scan(&mb); err != nil {
			return "", fmt.Errorf("read %s: %w", name, err)
		}
		if mb <= want[name] {
			continue
		}
		var before string
		err := c.QueryRow(ctx, `SELECT coalesce((SELECT setting FROM pg_file_settings WHERE name = $1 AND sourcefile LIKE '%postgresql.auto.conf' AND applied), '')`, name).Scan(&before)
		if err != nil {
			return "", fmt.Errorf("read postgresql.auto.conf's %s: %w", name, err)
		}
		if _, err := c.Exec(ctx, fmt.Sprintf(`ALTER SYSTEM SET %s = '%dMB'`, name, want[name])); err != nil {
			return "", err
		}
		w.sized[name] = before
		set = append(set, fmt.Sprintf("%s %d MB (was %d MB)", name, want[name], mb))
	}
	return strings.Join(set, ", "), nil
}

// unsizeWAL puts back the WAL settings sizeWAL set, and reloads them.
func (w *walFS) unsizeWAL(ctx context.Context, t *cluster.Topology, n *cluster.Node) error {
	if len(w.sized) == 0 {
		return nil
	}
	c, err := t.Connect(ctx, n)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for _, name := range walSizes {
		before, ok := w.sized[name]
		if !ok {
			continue
		}
		q := `ALTER SYSTEM RESET ` + name
		if before != "" {
			q = fmt.Sprintf(`ALTER SYSTEM SET %s = '%s'`, name, strings.ReplaceAll(before, "'", "''"))
		}
		if _, err := c.Exec(ctx, q); err != nil {
			return err
		}
	}
	// In effect now, not at the next restart: when the drill is refused after sizeWAL (pg_wal
	// too large), the primary was started again with the drill's sizes and nothing restarts it.
	_, err = c.Exec(ctx, `SELECT pg_reload_conf()`)
	return err
}

func (w *walFS) ballast() string { return filepath.Join(w.mnt, "agbench-ballast") }

// prepareWALFull makes ready what a fault needs before the first cycle and returns what undoes
// it at the end (nil when the fault needs nothing).
func prepareWALFull(ctx context.Context, t *cluster.Topology, o Options, p Progress) (func(context.Context) error, error) {
	if o.Fault != FaultWALFull {
		return nil, nil
	}
	w, err := mountWALFS(ctx, t, o.WALFSSize, p)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return w.restore(ctx, t, p) }, nil
}

// mountWALFS makes the file system and moves the primary's WAL onto it: the primary is shut
// down cleanly, its pg_wal copied onto the new file system and kept aside until the end,
// pg_wal made a link to it, and the primary started again.
func mountWALFS(ctx context.Context, t *cluster.Topology, size int64, p Progress) (*walFS, error) {
	n := t.Primary()
	w := &walFS{node: n.Name, image: filepath.Join(t.Dir, "walfs-"+n.Name+".img"), mnt: filepath.Join(t.Dir, "walfs-"+n.Name),
		pgwal: filepath.Join(n.DataDir, "pg_wal"), saved: filepath.Join(n.DataDir, "pg_wal.agbench-drill"), uid: t.OSUser.UID, gid: t.OSUser.GID}
	if !t.OSUser.Switch {
		w.uid, w.gid = os.Getuid(), os.Getgid()
	}
	for _, left := range []string{w.image, w.saved} {
		if _, err := os.Lstat(left); err == nil {
			return nil, fmt.Errorf("%s is left from a wal-full drill that did not end: %s", left, w.repair())
		}
	}
	undo := func(err error) (*walFS, error) {
		_ = run(context.WithoutCancel(ctx), "umount", w.mnt)
		os.Remove(w.mnt)
		os.Remove(w.image)
		return nil, err
	}
	f, err := os.OpenFile(w.image, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	err = errors.Join(f.Truncate(size), f.Close())
	if err != nil {
		return undo(err)
	}
	if err := run(ctx, "mkfs.ext4", "-q", "-F", "-m", "0", "-E", fmt.Sprintf("root_owner=%d:%d", w.uid, w.gid), w.image); err != nil {
		return undo(err)
	}
	if err := os.Mkdir(w.mnt, 0o700); err != nil {
		return undo(err)
	}
	if err := run(ctx, "mount", "-o", "loop", w.image, w.mnt); err != nil {
		return undo(err)
	}
	if err := errors.Join(os.Chown(w.mnt, w.uid, w.gid), os.Chmod(w.mnt, 0o700), os.Remove(filepath.Join(w.mnt, "lost+found"))); err != nil {
		return undo(err)
	}
	sized, err := w.sizeWAL(ctx, t, n, size)
	if err != nil {
		return undo(errors.Join(err, w.unsizeWAL(context.WithoutCancel(ctx), t, n)))
	}
	if sized != "" {
		p("wal-full: for the drill, %s (ALTER SYSTEM; put back at the end)", sized)
	}
	p("wal-full: a %s ext4 file system for %s's pg_wal at %s; restarting %s on it", units.FormatBytes(size), n.Name, w.mnt, n.Name)
	hctx := context.WithoutCancel(ctx) // from here the primary is stopped: it is started again whatever happens
	if err := t.StopNodeMode(hctx, n.Name, "fast"); err != nil {
		return undo(errors.Join(err, w.unsizeWAL(hctx, t, n)))
	}
	files, used, err := walToCopy(hctx, t, n.Name, w.pgwal)
	if err == nil && used > size-3*walSegment {
		err = agerr.BadInputf("%s's pg_wal holds %s it needs: more than a %s file system leaves room for (give --wal-fs-size %s or more)",
			n.Name, units.FormatBytes(used), units.FormatBytes(size), units.FormatBytes(used+4*walSegment))
	}
	if err == nil {
		err = run(hctx, "cp", append(append([]string{"-a"}, files...), w.mnt+"/")...)
	}
	if err == nil {
		err = os.Rename(w.pgwal, w.saved)
	}
	if err == nil {
		if err = os.Symlink(w.mnt, w.pgwal); err != nil {
			err = errors.Join(err, os.Rename(w.saved, w.pgwal))
		}
	}
	if err != nil {
		err = errors.Join(err, t.StartNode(hctx, n.Name))
		return undo(errors.Join(err, w.unsizeWAL(hctx, t, n)))
	}
	if err := t.StartNode(hctx, n.Name); err != nil {
		return nil, fmt.Errorf("start %s on its WAL file system: %w (%s)", n.Name, err, w.repair())
	}
	return w, waitStandbys(hctx, t)
}

// walToCopy lists what of a cleanly stopped node's pg_wal goes onto the small file system,
// and its size: everything but the segments after the one its last checkpoint's redo begins
// in. Those are recycled segments, renamed ahead by earlier checkpoints (after agbench tpcc
// build, 13 of them: 208 MiB), which the server writes again before it reads them: copied,
// they took the room the fault needs, and while the server wrote into them and its
// checkpoints renamed old segments ahead again, it never needed a new file, so the WAL file
// system filled with the ballast was never full for it (a minute of writes went on). The
// server makes or recycles new ones when it needs them.
func walToCopy(ctx context.Context, t *cluster.Topology, node, pgwal string) ([]string, int64, error) {
	redo, err := t.RedoWALFile(ctx, node)
	if err != nil {
		return nil, 0, err
	}
	entries, err := os.ReadDir(pgwal)
	if err != nil {
		return nil, 0, err
	}
	var files []string
	var used int64
	for _, e := range entries {
		if walSegmentName(e.Name()) && e.Name()[8:] > redo[8:] { // log and segment numbers, fixed-width hex
			continue
		}
		path := filepath.Join(pgwal, e.Name())
		n, err := duBytes(path)
		if err != nil {
			return nil, 0, err
		}
		files, used = append(files, path), used+n
	}
	return files, used, nil
}

// walSegmentName reports whether name is a WAL segment file's (24 upper-case hex digits:
// timeline, log, segment).
func walSegmentName(name string) bool {
	if len(name) != 24 {
		return false
	}
	for _, r := range name {
		if !(r >= '0' && r <= '9' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

// repair says how to put a node's WAL back by hand.
func (w *walFS) repair() string {
	return fmt.Sprintf("to repair: stop %s; rm -f %s/agbench-ballast; if %s is a link: rm %s, mkdir %s, cp -a %s/. %s/ (chown to the server's user, mode 0700), rm -rf %s; umount %s; rm %s; start %s",
		w.node, w.mnt, w.pgwal, w.pgwal, w.pgwal, w.mnt, w.pgwal, w.saved, w.mnt, w.image, w.node)
}

// restore puts the node's WAL back into its data folder and removes the file system.
func (w *walFS) restore(ctx context.Context, t *cluster.Topology, p Progress) error {
	os.Remove(w.ballast())
	if t.Primary().Name != w.node {
		return fmt.Errorf("wal-full: %s is no longer the primary; its WAL is left on %s (%s)", w.node, w.mnt, w.repair())
	}
	p("wal-full: moving %s's WAL back into its data folder", w.node)
	// The settings go back by SQL: now if the server is up, else once it is started again.
	unsized := w.unsizeWAL(ctx, t, t.Node(w.node))
	if err := t.StopNodeMode(ctx, w.node, "fast"); err != nil {
		return fmt.Errorf("stop %s: %w (%s)", w.node, err, w.repair())
	}
	err := os.Remove(w.pgwal)
	if err == nil {
		err = os.Mkdir(w.pgwal, 0o700)
	}
	if err == nil {
		err = errors.Join(os.Chown(w.pgwal, w.uid, w.gid), run(ctx, "cp", "-a", w.mnt+"/.", w.pgwal+"/"))
	}
	if err != nil {
		return fmt.Errorf("move %s's WAL back: %w (%s)", w.node, err, w.repair())
	}
	if err := t.StartNode(ctx, w.node); err != nil {
		return fmt.Errorf("start %s again: %w", w.node, err)
	}
	if unsized != nil {
		if unsized = w.unsizeWAL(ctx, t, t.Node(w.node)); unsized == nil {
			unsized = errors.Join(t.StopNodeMode(ctx, w.node, "fast"), t.StartNode(ctx, w.node))
		}
		if unsized != nil {
			unsized = fmt.Errorf("put back %s's %s: %w (ALTER SYSTEM RESET them by hand)", w.node, strings.Join(walSizes, ", "), unsized)
		}
	}
	return errors.Join(unsized, os.RemoveAll(w.saved), run(ctx, "umount", w.mnt), os.Remove(w.mnt), os.Remove(w.image), waitStandbys(ctx, t))
}

// waitStandbys waits until every standby streams from the primary.
func waitStandbys(ctx context.Context, t *cluster.Topology) error {
	var errs []error
	for _, s := range t.Standbys() {
		errs = append(errs, t.WaitStreaming(ctx, s.Name, healWait))
	}
	return errors.Join(errs...)
}

// walFull fills the primary's WAL file system, switches WAL segments until the server
// cannot write WAL, frees the space, and waits until the primary accepts writes again
// (starting it when its postmaster stopped) and every standby streams. Waiting for the
// fault to bite ends on ctx's end; the healing runs to its end whatever ctx does.
func walFull(ctx context.Context, t *cluster.Topology, c *Cycle, dc *result.DrillCycle, p Progress) error {
	hctx := context.WithoutCancel(ctx)
	n := t.Primary()
	w := &walFS{mnt: filepath.Join(t.Dir, "walfs-"+n.Name)}
	c.tally.primaryIs(server{port: n.Port})
	dc.WALBytesNote = "no failover: the primary stays"
	pid, err := t.OwnPostmaster(n.Name)
	if err != nil {
		return err
	}
	// A checkpoint first, so that the server keeps no more WAL than its settings allow, and
	// room for a few segments: freeing the ballast must make room for the one the crash
	// recovery writes, or the server could not come back.
	free, err := trimWAL(ctx, t, n, w.mnt)
	if err != nil {
		return fmt.Errorf("before filling %s's WAL file system: %w", n.Name, err)
	}
	if free < 2*walSegment {
		return fmt.Errorf("%s's WAL file system has %s free after a checkpoint: too little for the fault to be undone (give a larger --wal-fs-size)", n.Name, units.FormatBytes(free))
	}
	dc.FaultAt = time.Now()
	c.tally.fault(dc.FaultAt)
	filled, ferr := fill(w.ballast())
	p("cycle %d: %s's WAL file system full (a ballast of %s); switching WAL segments until it needs a new one", c.N, n.Name, units.FormatBytes(filled))
	detail := ""
	if ferr == nil {
		detail = waitFull(ctx, t, n, pid, c)
	} else {
		dc.Problems = append(dc.Problems, "ballast: "+ferr.Error())
	}
	switch {
	case detail == "" && ctx.Err() == nil:
		dc.FaultMissed = fmt.Sprintf("%s went on accepting writes for %v with its WAL file system full", n.Name, fullWait)
		c.tally.missed()
	case detail == "":
		dc.Problems = append(dc.Problems, "interrupted before the WAL file system stopped the server's writes")
	default:
		c.tally.event(result.EventDetected, time.Now(), detail)
		p("cycle %d: %s", c.N, detail)
	}
	if err := os.Remove(w.ballast()); err != nil && !os.IsNotExist(err) {
		dc.Healed = "space not freed: " + err.Error()
		return fmt.Errorf("free %s: %w", w.ballast(), err)
	}
	how, err := recoverInPlace(hctx, t, n)
	if err != nil {
		dc.Healed = "not back: " + err.Error()
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	if err := waitStandbys(hctx, t); err != nil {
		dc.Healed = "standbys not streaming: " + err.Error()
		return err
	}
	dc.Healed = how + "; standbys streaming"
	c.tally.event(result.EventHealed, time.Now(), "space freed; "+how)
	p("cycle %d: space freed; %s %s", c.N, n.Name, how)
	return nil
}

// postmasterUp is true while node's postmaster pid runs (a PANIC makes it restart its
// children, not itself).
func postmasterUp(t *cluster.Topology, node string, pid int) bool {
	now, err := t.OwnPostmaster(node)
	return err == nil && now == pid
}

// waitFull waits until the server shows that its WAL cannot be written: a write failed
// after the fault, or the postmaster stopped. It switches WAL segments meanwhile, so that
// the server needs a new segment file soon. It returns what was seen, "" when nothing was
// before fullWait or ctx's end.
func waitFull(ctx context.Context, t *cluster.Topology, n *cluster.Node, pid int, c *Cycle) string {
	deadline := time.Now().Add(fullWait)
	conn, _ := t.Connect(ctx, n)
	defer func() {
		if conn != nil {
			conn.Close(context.WithoutCancel(ctx))
		}
	}()
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if e := c.tally.writeErrorSinceFault(); e != "" {
			return "writes refused: " + e
		}
		if !postmasterUp(t, n.Name, pid) {
			return "the postmaster stopped"
		}
		if conn != nil {
			qctx, cancel := context.WithTimeout(ctx, time.Second)
			if _, err := conn.Exec(qctx, `SELECT pg_switch_wal()`); err != nil {
				conn.Close(context.WithoutCancel(ctx))
				conn = nil
			}
			cancel()
		}
		sleep(ctx, switchEvery)
	}
	return ""
}

// writeErrorSinceFault is the SQLSTATE and message of the first write that failed after
// the fault because of the server (serverFault), "" when none did.
func (t *tally) writeErrorSinceFault() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.errors {
		if e.Op == OpWrite && !e.At.Before(t.faultAt) && serverFault(e.SQLState) {
			return e.SQLState + " " + e.Message
		}
	}
	return ""
}

// serverFault reports whether an error's SQLSTATE (or the client's class) says the server
// could not do the work — no space (53), a lost or refused connection (08), a shutdown or
// restart (57), a system error (58), an internal one (XX), no answer — rather than the
// transaction's own outcome: TPC-C's terminals meet serialization failures, deadlocks and
// unique violations (40, 23) in the normal course, which are no sign of a full disk.
func serverFault(state string) bool {
	switch state {
	case stateTimedOut, stateConnect:
		return true
	}
	return len(state) == 5 && slices.Contains([]string{"08", "53", "57", "58", "XX"}, state[:2])
}

// fill writes a ballast file until its file system is full and returns its size.
func fill(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	for _, chunk := range []int{1 << 20, 4 << 10} {
		buf := make([]byte, chunk)
		for {
			k, err := f.Write(buf)
			n += int64(k)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				return n, err
			}
		}
	}
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.ENOSPC) {
		return n, err
	}
	return n, nil
}

// duBytes is the size of the files under dir.
func duBytes(dir string) (int64, error) {
	var sum int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			sum += fi.Size()
		}
		return nil
	})
	return sum, err
}

// run runs a program and returns its output in the error when it fails.
func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// recoverInPlace waits until node n accepts writes again after
// its disk was freed: its postmaster restarts the server by itself after a PANIC
// (restart_after_crash), but shuts down when the crash recovery itself failed for want of
// space, which can happen just before the space is freed; then agbench starts it, as a DBA
// would. It says which it was.
func recoverInPlace(ctx context.Context, t *cluster.Topology, n *cluster.Node) (string, error) {
	how, started := "recovered by itself (restart_after_crash)", false
	deadline := time.Now().Add(backWait)
	for {
		err := writable1(ctx, t, n)
		if err == nil {
			return how, nil
		}
		if _, perr := t.OwnPostmaster(n.Name); perr != nil && !started {
			how, started = "started again by agbench (its postmaster had stopped)", true
			if err := t.StartNode(ctx, n.Name); err != nil {
				return "", fmt.Errorf("start it again: %w", err)
			}
			continue
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("not accepting writes %v after the space was freed: %w", backWait, err)
		}
		sleep(ctx, 50*time.Millisecond)
	}
}

// writable1 is nil when node n accepts a session and is out of recovery.
func writable1(ctx context.Context, t *cluster.Topology, n *cluster.Node) error {
	c, err := t.Connect(ctx, n)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	var rec bool
	if err := c.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&rec); err != nil {
		return err
	}
	if rec {
		return errors.New("still in recovery")
	}
	return nil
}

// trimWAL checkpoints node n (removing the WAL segments it need not keep) and returns the
// free space of the file system at mnt.
func trimWAL(ctx context.Context, t *cluster.Topology, n *cluster.Node, mnt string) (int64, error) {
	c, err := t.Connect(ctx, n)
	if err != nil {
		return 0, err
	}
	_, err = c.Exec(ctx, `CHECKPOINT`)
	c.Close(context.WithoutCancel(ctx))
	if err != nil {
		return 0, err
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}
