package seed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// serverPhaseCheckpoint is pg_stat_progress_basebackup's phase while the backup's checkpoint runs.
const serverPhaseCheckpoint = "waiting for checkpoint to finish"

// stopGrace is how long pg_basebackup has to exit after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// appName is the application_name of the seeding's pg_basebackup connections, by which its
// walsender is found in pg_stat_activity.
func (s *seeding) appName() string { return "agbench_seed_" + s.node.Name }

// baseBackup runs pg_basebackup into dir (format "p" plain, or "t" tar) with WAL streamed
// through the new standby's slot, times the checkpoint and then the phase named transfer,
// and polls the server's progress meanwhile.
func (s *seeding) baseBackup(ctx context.Context, dir, format, transfer string) error {
	if err := s.makeParent(dir); err != nil {
		return err
	}
	p := s.topo.Primary()
	host, port := p.Host, p.Port
	if !s.o.NoWireMeter {
		var stop func()
		var err error
		if host, port, stop, err = s.meterWire(); err != nil {
			return err
		}
		defer stop()
	}
	cmd, stderr := s.baseBackupCmd(ctx, dir, format, host, port)
	if err := s.runBackup(ctx, cmd, transfer); err != nil {
		return err
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pg_basebackup stopped: %w", ctx.Err())
		}
		return fmt.Errorf("pg_basebackup: %v: %s", err, lastLines(stderr.String(), 5))
	}
	// The server's last progress reading may be up to a poll interval old; the manifest
	// has the exact bytes of the files.
	if n, err := manifestBytesOf(filepath.Join(dir, "backup_manifest")); err == nil {
		s.streamed.Store(n)
	} else {
		s.rep.Warnings = append(s.rep.Warnings, "streamed bytes from the last progress reading: "+err.Error())
	}
	return nil
}

// makeParent makes the folder dir goes into, owned by the server's OS user (the folder
// only, not what is in it).
func (s *seeding) makeParent(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if u := s.topo.OSUser; u.Switch {
		return os.Chown(filepath.Dir(dir), u.UID, u.GID)
	}
	return nil
}

// meterWire starts the counting relay to the primary and returns where pg_basebackup is to
// connect, and the function that stops the relay and reports the bytes it counted.
func (s *seeding) meterWire() (string, int, func(), error) {
	p := s.topo.Primary()
	w, err := newWireMeter(net.JoinHostPort(p.Host, strconv.Itoa(p.Port)))
	if err != nil {
		return "", 0, nil, err
	}
	s.m.setWire(func() int64 { base, _, _ := w.Bytes(); return base })
	return "127.0.0.1", w.Port(), func() {
		w.Close()
		base, wal, _ := w.Bytes()
		s.rep.WireBytes, s.rep.WALWireBytes = base, wal
		s.m.setWire(nil)
		w.Close()
	}, nil
}

// baseBackupCmd is the pg_basebackup command into dir over host:port, and the buffer of
// its stderr.
func (s *seeding) baseBackupCmd(ctx context.Context, dir, format, host string, port int) (*exec.Cmd, *bytes.Buffer) {
	t := s.topo
	conn := fmt.Sprintf("host=%s port=%d user=%s application_name=%s sslmode=disable", host, port, t.Superuser, s.appName())
	args := []string{"-d", conn, "-D", dir, "-F", format, "-X", "stream", "-S", s.node.Slot,
		"-c", "fast", "--progress", "--no-password"}
	if format == "p" {
		args = append(args, "--no-sync") // the sync phase flushes the data folder, timed apart
	}
	if a := s.o.Compress.arg(); a != "" {
		args = append(args, "--compress", a)
	}
	if s.o.MaxRate > 0 {
		args = append(args, "--max-rate", fmt.Sprintf("%dk", s.o.MaxRate>>10))
	}
	cmd := t.OSUser.Command(ctx, t.PG.Path("pg_basebackup"), args...)
	cmd.Env = append(cmd.Env, "PGPASSFILE="+t.PassFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// Stop the whole process group (pg_basebackup forks a WAL streamer) politely first.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	return cmd, &stderr
}

// runBackup starts pg_basebackup, meters it through the checkpoint and the transfer while
// the server's progress is polled, and returns once it has exited, not yet reaped (the
// caller's cmd.Wait), so that the meter read the exited process's totals.
func (s *seeding) runBackup(ctx context.Context, cmd *exec.Cmd, transfer string) error {
	s.m.enter(PhaseCheckpoint)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pg_basebackup: %w", err)
	}
	s.m.watchReceiver(cmd.Process.Pid)
	pollCtx, stopPoll := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		s.pollBackup(pollCtx, transfer)
	}()
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	stopPoll()
	<-polled
	if s.m.current() == PhaseCheckpoint { // it ended before the poller saw the transfer begin
		s.m.enter(transfer)
	}
	s.m.finishReceiver()
	s.m.watchSender(0)
	return nil
}

// pollBackup reads the backup's progress on the primary until ctx ends, switching the
// meter from the checkpoint to the transfer phase when the server moves past it.
func (s *seeding) pollBackup(ctx context.Context, transfer string) {
	var c *pgx.Conn
	defer func() {
		if c != nil {
			c.Close(context.WithoutCancel(ctx))
		}
	}()
	t := time.NewTicker(s.o.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if c == nil {
			var err error
			if c, err = s.topo.Connect(ctx, s.topo.Primary()); err != nil {
				c = nil
				s.m.tick()
				continue
			}
		}
		var pid int
		var phase, waitType, waitEvent string
		var total, done int64
		err := c.QueryRow(ctx, `SELECT p.pid, p.phase, coalesce(p.backup_total, 0), p.backup_streamed,
				coalesce(a.wait_event_type, ''), coalesce(a.wait_event, '')
			FROM pg_stat_progress_basebackup p JOIN pg_stat_activity a ON a.pid = p.pid
			WHERE a.application_name = $1`, s.appName()).Scan(&pid, &phase, &total, &done, &waitType, &waitEvent)
		if errors.Is(err, pgx.ErrNoRows) {
			s.m.tick()
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			c.Close(context.WithoutCancel(ctx))
			c = nil
			continue
		}
		s.m.watchSender(pid)
		if phase != serverPhaseCheckpoint && s.m.current() == PhaseCheckpoint {
			s.m.enter(transfer)
		}
		if done > s.streamed.Load() {
			s.streamed.Store(done)
		}
		if total > 0 {
			s.estimated.Store(total)
		}
		s.m.observe(phase, done, total, waitType, waitEvent, nil)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var keep []string
	for _, l := range lines {
		// --progress writes "123/456 kB (27%), 0/1 tablespace" lines; keep the messages.
		if strings.Contains(l, " kB (") && strings.Contains(l, "tablespace") {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, "\n")
}

// syncTree flushes every file and folder under dir to disk, as pg_basebackup would have
// without --no-sync.
func syncTree(ctx context.Context, dir string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.Type()&os.ModeSymlink != 0 {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}
