package drill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

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
}

func (w *walFS) ballast() string { return filepath.Join(w.mnt, "agbench-ballast") }

// prepare makes ready what a fault needs before the first cycle and returns what undoes
// it at the end (nil when the fault needs nothing).
func prepare(ctx context.Context, t *cluster.Topology, o Options, p Progress) (func(context.Context) error, error) {
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
	p("wal-full: a %s ext4 file system for %s's pg_wal at %s; restarting %s on it", units.FormatBytes(size), n.Name, w.mnt, n.Name)
	hctx := context.WithoutCancel(ctx) // from here the primary is stopped: it is started again whatever happens
	if err := t.StopNodeMode(hctx, n.Name, "fast"); err != nil {
		return undo(err)
	}
	used, err := duBytes(w.pgwal)
	if err == nil && used > size-3*walSegment {
		err = agerr.BadInputf("%s's pg_wal holds %s: more than a %s file system leaves room for (give --wal-fs-size %s or more)",
			n.Name, units.FormatBytes(used), units.FormatBytes(size), units.FormatBytes(used+4*walSegment))
	}
	if err == nil {
		err = run(hctx, "cp", "-a", w.pgwal+"/.", w.mnt+"/")
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
		return undo(errors.Join(err, t.StartNode(hctx, n.Name)))
	}
	if err := t.StartNode(hctx, n.Name); err != nil {
		return nil, fmt.Errorf("start %s on its WAL file system: %w (%s)", n.Name, err, w.repair())
	}
	return w, waitStandbys(hctx, t)
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
	return errors.Join(os.RemoveAll(w.saved), run(ctx, "umount", w.mnt), os.Remove(w.mnt), os.Remove(w.image), waitStandbys(ctx, t))
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
	c.tally.primaryIs(n.Port)
	dc.WALBytesNote = "no failover: the primary stays"
	pid, err := t.OwnPostmaster(n.Name)
	if err != nil {
		return err
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
	if detail == "" {
		dc.Problems = append(dc.Problems, fmt.Sprintf("%s went on accepting writes with its WAL file system full for %v (or the wait was interrupted)", n.Name, fullWait))
	} else {
		c.tally.event(result.EventDetected, time.Now(), detail)
		p("cycle %d: %s", c.N, detail)
	}
	if err := os.Remove(w.ballast()); err != nil && !os.IsNotExist(err) {
		dc.Healed = "space not freed: " + err.Error()
		return fmt.Errorf("free %s: %w", w.ballast(), err)
	}
	how := "recovered by itself (restart_after_crash)"
	if !postmasterUp(t, n.Name, pid) {
		how = "started again by agbench"
		if _, err := t.OwnPostmaster(n.Name); err != nil { // not restarting on its own: start it
			if err := t.StartNode(hctx, n.Name); err != nil {
				dc.Healed = "not started: " + err.Error()
				return fmt.Errorf("start %s again: %w", n.Name, err)
			}
		}
	}
	if err := waitWritable(hctx, t, n, backWait); err != nil {
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
// the fault, "" when none did.
func (t *tally) writeErrorSinceFault() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.errors {
		if e.Op == OpWrite && !e.At.Before(t.faultAt) {
			return e.SQLState + " " + e.Message
		}
	}
	return ""
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

// waitWritable waits until node n accepts sessions and is out of recovery (the load may
// have stopped: an interrupted drill heals all the same), or until bound passes.
func waitWritable(ctx context.Context, t *cluster.Topology, n *cluster.Node, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	var err error
	for time.Now().Before(deadline) {
		var c *pgx.Conn
		if c, err = t.Connect(ctx, n); err == nil {
			var rec bool
			err = c.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&rec)
			c.Close(ctx)
			if err == nil && !rec {
				return nil
			}
			if err == nil {
				err = errors.New("still in recovery")
			}
		}
		sleep(ctx, 50*time.Millisecond)
	}
	return fmt.Errorf("not accepting writes after %v: %w", bound, err)
}
