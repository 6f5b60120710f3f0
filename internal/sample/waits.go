package sample

// Wait classes: how a PostgreSQL wait event reads to someone who knows SQL Server's wait
// stats. WALWrite/WALSync are WRITELOG, DataFileRead is PAGEIOLATCH_*.
const (
	WaitCPU      = "cpu"       // active with no wait event: on a CPU or runnable
	WaitLog      = "log"       // IO WALWrite, WALSync, WALInit*; LWLock WALWrite, WALInsert, WALBufMapping
	WaitDataRead = "data_read" // IO DataFileRead, DataFilePrefetch
	WaitOtherIO  = "other_io"  // any other IO event
	WaitLWLock   = "lwlock"    // lightweight locks other than the WAL's
	WaitLock     = "lock"      // heavyweight locks: relation, tuple, transactionid ...
	WaitClient   = "client"    // ClientRead/ClientWrite, and sessions idle in a transaction
	WaitSyncRep  = "sync_rep"  // IPC SyncRep: commit waiting for a synchronous standby
	WaitOther    = "other"     // Timeout, Activity, BufferPin, Extension, other IPC
)

// WaitClasses lists the classes in a fixed order.
var WaitClasses = []string{WaitCPU, WaitLog, WaitDataRead, WaitOtherIO, WaitLWLock, WaitLock, WaitClient, WaitSyncRep, WaitOther}

// ClassifyWait maps a session of pg_stat_activity (wait_event_type, wait_event, state) to
// its wait class. Empty type and event mean no wait.
func ClassifyWait(typ, event, state string) string {
	if state == "idle in transaction" || state == "idle in transaction (aborted)" {
		return WaitClient
	}
	switch typ {
	case "":
		return WaitCPU
	case "IO":
		switch event {
		case "WALWrite", "WALSync", "WALInitWrite", "WALInitSync", "WALSyncMethodAssign":
			return WaitLog
		case "DataFileRead", "DataFilePrefetch":
			return WaitDataRead
		}
		return WaitOtherIO
	case "LWLock":
		switch event {
		case "WALWrite", "WALInsert", "WALBufMapping", "WALWriteLock", "WALInsertLock", "wal_insert":
			return WaitLog
		}
		return WaitLWLock
	case "Lock":
		return WaitLock
	case "Client":
		return WaitClient
	case "IPC":
		if event == "SyncRep" {
			return WaitSyncRep
		}
	}
	return WaitOther
}
