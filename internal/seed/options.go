package seed

import (
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/units"
)

// Methods of seeding.
const (
	MethodDirect        = "direct"
	MethodBackupRestore = "backup-restore"
)

// Defaults and bounds.
const (
	// DefaultLagThreshold is the replay lag under which a new standby counts as caught up.
	DefaultLagThreshold = 16 << 20
	// DefaultPollInterval is how often progress is read from the primary and /proc.
	DefaultPollInterval = 250 * time.Millisecond
	// DefaultCatchUpTimeout bounds the wait for a started standby to stream and catch up.
	DefaultCatchUpTimeout = 10 * time.Minute
	// pg_basebackup's --max-rate bounds (its documentation): 32 kB/s to 1024 MB/s.
	minMaxRate = 32 << 10
	maxMaxRate = 1024 << 20
	// spaceMargin is added to every free-space need (WAL written meanwhile, files' slack).
	spaceMargin = 256 << 20
)

// Options are the choices of one seeding.
type Options struct {
	// Method is MethodDirect or MethodBackupRestore.
	Method string
	// Compress is the server-side compression; the zero value is none.
	Compress Compression
	// MaxRate limits the transfer (bytes per second, pg_basebackup --max-rate); 0 is no limit.
	MaxRate int64
	// Name of the new standby; "" picks the first free standbyN.
	Name string
	// Sync waits after joining until the primary counts the standby as synchronous (a
	// cluster with synchronous commit only).
	Sync bool
	// LagThreshold is the replay lag in bytes under which the standby has caught up.
	LagThreshold int64
	// CatchUpTimeout bounds the wait for streaming and catch-up.
	CatchUpTimeout time.Duration
	// BackupDir holds backups of the backup-restore method; "" is <cluster>/backups.
	BackupDir string
	// KeepBackup keeps the backup after it was restored.
	KeepBackup bool
	// Retries is how many times a failed transfer is tried again (not after an interrupt).
	Retries int
	// NoWireMeter connects pg_basebackup straight to the primary instead of through the
	// counting relay; the bytes on the wire are then unknown for the direct method.
	NoWireMeter bool
	// PollInterval is how often progress is read; 0 is DefaultPollInterval.
	PollInterval time.Duration
	// Progress, when set, receives every progress reading, from another goroutine.
	Progress func(Progress)
}

func (o *Options) defaults() {
	if o.Method == "" {
		o.Method = MethodDirect
	}
	if o.LagThreshold == 0 {
		o.LagThreshold = DefaultLagThreshold
	}
	if o.CatchUpTimeout == 0 {
		o.CatchUpTimeout = DefaultCatchUpTimeout
	}
	if o.PollInterval == 0 {
		o.PollInterval = DefaultPollInterval
	}
}

// validate checks what can be checked without the cluster, reporting every problem.
func (o *Options) validate() error {
	var errs []error
	if o.Method != MethodDirect && o.Method != MethodBackupRestore {
		errs = append(errs, agerr.BadInputf("--method %q: want %s or %s", o.Method, MethodDirect, MethodBackupRestore))
	}
	if o.MaxRate != 0 && (o.MaxRate < minMaxRate || o.MaxRate > maxMaxRate) {
		errs = append(errs, agerr.BadInputf("--max-rate %s: pg_basebackup takes 32k to 1024M (bytes per second)", units.FormatBytesShort(o.MaxRate)))
	}
	if o.LagThreshold < 0 {
		errs = append(errs, agerr.BadInputf("--lag-threshold %d: must not be negative", o.LagThreshold))
	}
	if o.Retries < 0 || o.Retries > 10 {
		errs = append(errs, agerr.BadInputf("--retries %d: want 0 to 10", o.Retries))
	}
	if o.PollInterval < 0 {
		errs = append(errs, agerr.BadInputf("poll interval %v: must be positive", o.PollInterval))
	}
	return agerr.Join(errs...)
}
