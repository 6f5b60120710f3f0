package seed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/sample"
	"github.com/agbench/agbench/internal/units"
)

// cleanupTimeout bounds removing a half-made standby after a failure or an interrupt.
const cleanupTimeout = 2 * time.Minute

// Report is what one seeding did and measured: the result's seeding section, and the
// progress and device series that go to the step's series.
type Report struct {
	result.Seeding
	Series map[string]result.TimeSeries `json:"-"`
}

// Phase returns the named phase's figures (zero when it did not run).
func (r *Report) Phase(name string) PhaseUse {
	for _, p := range r.Phases {
		if p.Name == name {
			return p
		}
	}
	return PhaseUse{}
}

// Seed adds a standby to the cluster by the chosen method and returns what it measured.
// Bad input (a name that exists, a cluster that is down, too little disk space, a
// compression the server lacks) is found before anything is made. A seeding that fails or
// is interrupted removes the half-made standby and its slot and records why in the history.
// It takes the cluster's lock.
func Seed(ctx context.Context, topo *cluster.Topology, o Options) (*Report, error) {
	o.defaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	unlock, err := topo.Lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	s := &seeding{topo: topo, o: o}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s.run(ctx)
}

type seeding struct {
	topo      *cluster.Topology
	o         Options
	node      cluster.Node
	backupDir string // this seeding's backup folder (backup-restore)
	need      int64
	rec       Record
	m         *meter
	rep       *Report
	// streamed and estimated come from the progress poller.
	streamed, estimated atomic.Int64
}

// checkTimeout bounds the checks' questions to the primary: long enough for a server on a
// busy machine, short enough that a hung one is said.
const checkTimeout = time.Minute

// check finds bad input before anything is made: the primary down, the name taken, a
// compression the server lacks, too little disk space.
func (s *seeding) check(ctx context.Context) error {
	// What is bad without asking the server is said first, and never hidden behind a server
	// that answers slowly.
	var errs []error
	if s.o.Sync && s.topo.Commit != cluster.CommitSync {
		errs = append(errs, agerr.BadInputf("--sync: cluster %s commits asynchronously, so no standby of it is synchronous; create it with --commit sync", s.topo.Name))
	}
	var err error
	if s.node, err = s.topo.PlanStandby(s.o.Name); err != nil {
		errs = append(errs, err)
	}
	if err := agerr.Join(errs...); err != nil {
		return err
	}
	p := s.topo.Primary()
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	c, err := s.topo.Connect(cctx, p)
	if err != nil {
		return agerr.BadInputf("cluster %s is down or unreachable (%s on %s:%d: %v): start it with agbench cluster start --name %s",
			s.topo.Name, p.Name, p.Host, p.Port, err, s.topo.Name)
	}
	defer c.Close(context.WithoutCancel(ctx))
	supported, version, err := ServerCompression(cctx, c)
	if err != nil {
		return err
	}
	if err := checkSupported(s.o.Compress, supported, version); err != nil {
		return err
	}
	var size int64
	if err := c.QueryRow(cctx, `SELECT sum(pg_database_size(oid))::bigint FROM pg_database`).Scan(&size); err != nil {
		return err
	}
	s.need = size + spaceMargin
	if s.o.Method == MethodBackupRestore {
		dir := s.o.BackupDir
		if dir == "" {
			dir = filepath.Join(s.topo.Dir, "backups")
		}
		s.backupDir = filepath.Join(dir, fmt.Sprintf("%s-%s", s.node.Name, time.Now().UTC().Format("20060102T150405Z")))
	}
	return s.checkSpace(size)
}

// checkSpace wants room for the new data folder and, for backup-restore, the backup too
// (counted uncompressed: the ratio is not known beforehand), on whichever file systems.
func (s *seeding) checkSpace(size int64) error {
	type want struct {
		path string
		dev  uint64
		need int64
		what []string
	}
	var wants []*want
	addNeed := func(path string, need int64, what string) error {
		existing := path
		for !exists(existing) {
			existing = filepath.Dir(existing)
		}
		var st unix.Stat_t
		if err := unix.Stat(existing, &st); err != nil {
			return err
		}
		for _, w := range wants {
			if w.dev == st.Dev {
				w.need += need
				w.what = append(w.what, what)
				return nil
			}
		}
		wants = append(wants, &want{path: existing, dev: st.Dev, need: need, what: []string{what}})
		return nil
	}
	if err := addNeed(s.node.DataDir, size+spaceMargin, "the new data folder"); err != nil {
		return err
	}
	if s.backupDir != "" {
		if err := addNeed(s.backupDir, size+spaceMargin, "the backup"); err != nil {
			return err
		}
	}
	var errs []error
	for _, w := range wants {
		var fs unix.Statfs_t
		if err := unix.Statfs(w.path, &fs); err != nil {
			return err
		}
		free := int64(fs.Bavail) * int64(fs.Bsize)
		if free < w.need {
			errs = append(errs, agerr.BadInputf("too little disk space on %s: %s free, %s needed for %s (the databases are %s)",
				w.path, units.FormatBytesShort(free), units.FormatBytesShort(w.need), strings.Join(w.what, " and "), units.FormatBytesShort(size)))
		}
	}
	return agerr.Join(errs...)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func (s *seeding) run(ctx context.Context) (rep *Report, err error) {
	o := s.o
	s.rep = &Report{Seeding: result.Seeding{Standby: s.node.Name, Port: s.node.Port, Method: o.Method,
		Compression: o.Compress.String(), MaxRate: o.MaxRate, Started: time.Now().UTC()}}
	s.rec = Record{Standby: s.node.Name, Method: o.Method, Compression: o.Compress.String(), MaxRate: o.MaxRate,
		Start: s.rep.Started, State: StateSeeding}
	if err := putRecord(s.topo.Dir, &s.rec); err != nil {
		return nil, err
	}
	s.rep.HistoryID = s.rec.ID
	paths := []string{filepath.Dir(s.node.DataDir), s.topo.Primary().DataDir}
	if s.backupDir != "" {
		if err := os.MkdirAll(filepath.Dir(s.backupDir), 0o755); err != nil {
			return nil, s.fail(err)
		}
		paths = append(paths, filepath.Dir(s.backupDir))
	}
	osSampler, serr := sample.NewOS(sample.OSConfig{Paths: paths})
	if serr != nil {
		s.rep.Warnings = append(s.rep.Warnings, "no device statistics: "+serr.Error())
		osSampler = nil
	} else {
		s.rep.Devices = osSampler.Devices()
		for p, why := range osSampler.Skipped {
			s.rep.Warnings = append(s.rep.Warnings, fmt.Sprintf("no device statistics for %s: %s", p, why))
		}
	}
	s.m = newMeter(osSampler, o.Progress)
	defer func() {
		if err != nil {
			err = s.fail(err)
			rep = nil
		}
	}()
	if err := s.topo.CreateSlot(ctx, s.node.Slot); err != nil {
		return nil, err
	}
	if err := s.transferWithRetries(ctx); err != nil {
		return nil, err
	}
	if err := s.timed(ctx, PhaseSync, func(ctx context.Context) error {
		s.m.watchSelf()
		return syncTree(ctx, s.node.DataDir)
	}); err != nil {
		return nil, err
	}
	if err := s.timed(ctx, PhaseStart, func(ctx context.Context) error { return s.topo.StartStandby(ctx, &s.node) }); err != nil {
		return nil, err
	}
	if err := s.timed(ctx, PhaseCatchUp, s.catchUp); err != nil {
		return nil, err
	}
	if err := s.timed(ctx, PhaseJoin, func(ctx context.Context) error { return s.topo.JoinStandby(ctx, s.node) }); err != nil {
		return nil, err
	}
	if o.Sync {
		if err := s.timed(ctx, PhaseSyncCommit, s.waitSynchronous); err != nil {
			return nil, err
		}
	}
	s.finishReport()
	s.rec.State, s.rec.End = StateCompleted, s.rep.Ended
	s.fillRecord()
	if err := putRecord(s.topo.Dir, &s.rec); err != nil {
		return s.rep, fmt.Errorf("seeding completed but its history was not written: %w", err)
	}
	return s.rep, nil
}

// timed runs one phase of the seeding, ticking the meter while it runs.
func (s *seeding) timed(ctx context.Context, phase string, f func(context.Context) error) error {
	s.m.enter(phase)
	stop := s.ticker(ctx)
	defer stop()
	return f(ctx)
}

// ticker ticks the meter every poll interval until stopped.
func (s *seeding) ticker(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.o.PollInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.m.tick()
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (s *seeding) transferWithRetries(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		s.rep.Attempts, s.rec.Attempts = attempt, attempt
		err := s.transfer(ctx)
		if err == nil || ctx.Err() != nil || attempt > s.o.Retries {
			return err
		}
		s.rep.Warnings = append(s.rep.Warnings, fmt.Sprintf("attempt %d failed: %v", attempt, err))
		os.RemoveAll(s.node.DataDir)
		if s.backupDir != "" {
			os.RemoveAll(s.backupDir)
		}
		_ = putRecord(s.topo.Dir, &s.rec)
	}
}

// transfer runs the checkpoint and the transfer (direct) or backup and restore phases.
func (s *seeding) transfer(ctx context.Context) error {
	if s.o.Method == MethodDirect {
		return s.baseBackup(ctx, s.node.DataDir, "p", PhaseTransfer)
	}
	if err := s.baseBackup(ctx, s.backupDir, "t", PhaseBackup); err != nil {
		return err
	}
	return s.timed(ctx, PhaseRestore, s.restore)
}

func (s *seeding) restore(ctx context.Context) error {
	files, err := backupFiles(s.backupDir)
	if err != nil {
		return err
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	s.rep.BackupFileBytes = total
	s.m.watchSelf()
	if err := os.MkdirAll(s.node.DataDir, 0o700); err != nil {
		return err
	}
	var read, written atomic.Int64
	done := make(chan error, 1)
	go func() {
		_, err := restoreBackup(ctx, files, s.node.DataDir, &read, &written)
		done <- err
	}()
	t := time.NewTicker(s.o.PollInterval)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			if !s.o.KeepBackup {
				if err := os.RemoveAll(s.backupDir); err != nil {
					return err
				}
			}
			return s.topo.OSUser.Own(s.node.DataDir)
		case <-ctx.Done():
			<-done // extraction stops at its next read
			return ctx.Err()
		case <-t.C:
			s.m.observe("", read.Load(), total, "", "", nil)
		}
	}
}

// catchUp waits until the new standby streams from the primary with replay lag under the
// threshold, reporting the lag as progress.
func (s *seeding) catchUp(ctx context.Context) error {
	deadline := time.Now().Add(s.o.CatchUpTimeout)
	c, err := s.topo.Connect(ctx, s.topo.Primary())
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	for {
		// To a login without pg_read_all_stats the row's state and positions are NULL.
		var state *string
		var lag *int64
		err := c.QueryRow(ctx, `SELECT state, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint
			FROM pg_stat_replication WHERE application_name = $1`, s.node.Name).Scan(&state, &lag)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err == nil && state == nil {
			return fmt.Errorf("catch-up of %s not measured: the primary's login lacks pg_read_all_stats (pg_monitor includes it), so pg_stat_replication's state and replay position are NULL for it", s.node.Name)
		}
		st := ""
		if state != nil {
			st = *state
		}
		s.m.observe(st, 0, 0, "", "", lag)
		if st == "streaming" && lag != nil && *lag <= s.o.LagThreshold {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not catch up within %v (state %q, replay lag %s)", s.node.Name, s.o.CatchUpTimeout, st, lagText(lag))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.o.PollInterval):
		}
	}
}

// lagText is a replay lag in bytes, or "not reported" when the primary gave none.
func lagText(lag *int64) string {
	if lag == nil {
		return "not reported"
	}
	return fmt.Sprintf("%d bytes", *lag)
}

// waitSynchronous waits until the primary counts the new standby as synchronous.
func (s *seeding) waitSynchronous(ctx context.Context) error {
	deadline := time.Now().Add(s.o.CatchUpTimeout)
	c, err := s.topo.Connect(ctx, s.topo.Primary())
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	for {
		var state string
		err := c.QueryRow(ctx, `SELECT sync_state FROM pg_stat_replication WHERE application_name = $1`, s.node.Name).Scan(&state)
		if err == nil && (state == "sync" || state == "quorum") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is not synchronous after %v (sync_state %q)", s.node.Name, s.o.CatchUpTimeout, state)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.o.PollInterval):
		}
	}
}

func (s *seeding) finishReport() {
	r := s.rep
	phases, series, waits := s.m.finish()
	r.Phases, r.Series, r.Waits = phases, series, waits
	r.Ended = time.Now().UTC()
	var moving float64
	for _, p := range phases {
		r.TotalSeconds += p.Seconds
		r.SenderCPUSeconds += p.SenderCPUSeconds
		r.ReceiverCPUSeconds += p.ReceiverCPUSeconds
		r.DiskReadBytes += p.DiskReadBytes
		r.DiskWriteBytes += p.DiskWriteBytes
		if p.Name == PhaseTransfer || p.Name == PhaseBackup || p.Name == PhaseRestore {
			moving += p.Seconds
		}
	}
	r.StreamedBytes, r.EstimatedBytes = s.streamed.Load(), s.estimated.Load()
	if moving > 0 {
		r.MBps = float64(r.StreamedBytes) / moving / 1e6
	}
	if r.WireBytes > 0 {
		r.CompressionRatio = float64(r.StreamedBytes) / float64(r.WireBytes)
	}
}

func (s *seeding) fillRecord() {
	s.rec.SizeBytes, s.rec.WireBytes, s.rec.Seconds, s.rec.MBps = s.rep.StreamedBytes, s.rep.WireBytes, s.rep.TotalSeconds, s.rep.MBps
}

// fail removes what the seeding made (standby, slot, backup) and records the failure.
func (s *seeding) fail(cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if s.m != nil {
		s.finishReport()
	}
	errs := []error{cause}
	if err := s.topo.RemoveStandby(ctx, s.node); err != nil {
		errs = append(errs, fmt.Errorf("cleaning up %s: %w", s.node.Name, err))
	}
	if s.backupDir != "" {
		if err := os.RemoveAll(s.backupDir); err != nil {
			errs = append(errs, err)
		}
	}
	s.rec.End = time.Now().UTC()
	s.rec.State, s.rec.Reason = StateFailed, cause.Error()
	if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		s.rec.State = StateInterrupted
	}
	s.fillRecord()
	if err := putRecord(s.topo.Dir, &s.rec); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
