package result

import "time"

// A seeding's section of its step (Step.Extra["seed"]), written by internal/seed (whose
// Report embeds Seeding) and read by internal/report for the seeding article's table.

// Phases of a seeding (SeedPhase.Name), written by internal/seed (whose Phase* names are
// these) and read by the comparison table of internal/render.
const (
	SeedPhaseCheckpoint = "checkpoint"
	SeedPhaseTransfer   = "transfer"
	SeedPhaseBackup     = "backup"
	SeedPhaseRestore    = "restore"
	SeedPhaseSync       = "sync"
	SeedPhaseStart      = "start"
	SeedPhaseCatchUp    = "catch-up"
	SeedPhaseJoin       = "join"
	SeedPhaseSyncCommit = "sync-commit"
)

// SeedPhases are the phases in the order they run (the article's steps).
var SeedPhases = []string{SeedPhaseCheckpoint, SeedPhaseTransfer, SeedPhaseBackup, SeedPhaseRestore, SeedPhaseSync,
	SeedPhaseStart, SeedPhaseCatchUp, SeedPhaseJoin, SeedPhaseSyncCommit}

// Seeding is what one seeding did and measured.
type Seeding struct {
	Standby     string    `json:"standby"`
	Port        int       `json:"port"`
	Method      string    `json:"method"`
	Compression string    `json:"compression"`
	MaxRate     int64     `json:"max_rate,omitempty"`
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended"`
	// Phases in the order they ran, each with its resource use; TotalSeconds is all of them.
	Phases       []SeedPhase `json:"phases"`
	TotalSeconds float64     `json:"total_seconds"`
	// EstimatedBytes is the server's estimate of the backup (pg_stat_progress_basebackup's
	// backup_total); StreamedBytes the database files it copied (uncompressed), from the
	// backup's manifest.
	EstimatedBytes int64 `json:"estimated_bytes"`
	StreamedBytes  int64 `json:"streamed_bytes"`
	// WireBytes is what the primary sent on the base backup's connection (compressed as
	// sent); WALWireBytes what it sent on the WAL streamer's (from the start of the backup's
	// first WAL segment). Both are counted by a relay; 0 with NoWireMeter.
	WireBytes    int64 `json:"wire_bytes"`
	WALWireBytes int64 `json:"wal_wire_bytes"`
	// BackupFileBytes is the size of the backup files (backup-restore only).
	BackupFileBytes int64 `json:"backup_file_bytes,omitempty"`
	// CompressionRatio is StreamedBytes / WireBytes (1 without compression, about).
	CompressionRatio float64 `json:"compression_ratio"`
	// MBps is StreamedBytes per second of the transfer (direct) or backup+restore phases.
	MBps float64 `json:"mb_per_s"`
	// CPU seconds of the sending walsender and of the receiver (pg_basebackup, restore) in all.
	SenderCPUSeconds   float64 `json:"sender_cpu_seconds"`
	ReceiverCPUSeconds float64 `json:"receiver_cpu_seconds"`
	DiskReadBytes      int64   `json:"disk_read_bytes"`
	DiskWriteBytes     int64   `json:"disk_write_bytes"`
	// Waits counts progress readings by what the sender waited on during the transfer.
	Waits    map[string]int `json:"waits,omitempty"`
	Attempts int            `json:"attempts"`
	// Devices are the block devices watched; Warnings what made a figure less than exact.
	Devices  []string `json:"devices,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// HistoryID is the seeding's record in the cluster's history.
	HistoryID int `json:"history_id"`
}

// SeedPhase is one phase of a seeding: its duration and the resources used during it.
type SeedPhase struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	// SenderCPUSeconds is the CPU of the primary's walsender serving the backup.
	SenderCPUSeconds float64 `json:"sender_cpu_seconds"`
	// ReceiverCPUSeconds is the CPU of pg_basebackup (its WAL child included), or of agbench
	// while it restores and syncs.
	ReceiverCPUSeconds float64 `json:"receiver_cpu_seconds"`
	// Disk bytes read and written on the devices behind the data and backup folders.
	DiskReadBytes  int64 `json:"disk_read_bytes"`
	DiskWriteBytes int64 `json:"disk_write_bytes"`
}

// Seeding returns the step's seeding section: nil when the step has none, an *ExtraError
// naming the section when it does not decode.
func (s *Step) Seeding() (*Seeding, error) {
	return extraOf[Seeding](s.ExtraOf, ExtraSeed)
}

// SeedRecord is one seeding in the history: like a row of sys.dm_hadr_automatic_seeding.
type SeedRecord struct {
	ID          int       `json:"id"`
	Standby     string    `json:"standby"`
	Method      string    `json:"method"`
	Compression string    `json:"compression"`
	MaxRate     int64     `json:"max_rate,omitempty"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end,omitzero"`
	// Removed is when a completed standby was dropped again (a --compare run, seed drop).
	Removed  time.Time `json:"removed,omitzero"`
	State    string    `json:"state"`
	Reason   string    `json:"failure_reason,omitempty"`
	Attempts int       `json:"attempts"`
	// SizeBytes is the data streamed (uncompressed); WireBytes what pg_basebackup received.
	SizeBytes int64   `json:"size_bytes,omitempty"`
	WireBytes int64   `json:"wire_bytes,omitempty"`
	Seconds   float64 `json:"seconds,omitempty"`
	// MBps is SizeBytes per second of the transfer (or backup) phase, in 10^6 bytes.
	MBps float64 `json:"mb_per_s,omitempty"`
}
