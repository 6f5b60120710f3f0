package sample

import "github.com/agbench/agbench/internal/result"

// Wait classes: how a PostgreSQL wait event reads to someone who knows SQL Server's wait
// stats (WALWrite/WALSync are WRITELOG, DataFileRead is PAGEIOLATCH_*). They are declared
// in internal/result, where the analysis and the report read them.
const (
	WaitCPU      = result.WaitCPU
	WaitLog      = result.WaitLog
	WaitDataRead = result.WaitDataRead
	WaitOtherIO  = result.WaitOtherIO
	WaitLWLock   = result.WaitLWLock
	WaitLock     = result.WaitLock
	WaitClient   = result.WaitClient
	WaitSyncRep  = result.WaitSyncRep
	WaitOther    = result.WaitOther
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
