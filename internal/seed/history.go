package seed

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agbench/agbench/internal/atomicfile"
	"github.com/agbench/agbench/internal/result"
)

// HistoryFile is the seeding history's file name in the cluster's folder.
const HistoryFile = "seeding-history.json"

// historySchema is the version of the history file's layout.
const historySchema = 1

// States of a seeding, as sys.dm_hadr_automatic_seeding's current_state names them in spirit.
const (
	StateSeeding     = "seeding"     // under way (or its process died: see End)
	StateCompleted   = "completed"   // joined
	StateFailed      = "failed"      // cleaned up; Reason says why
	StateInterrupted = "interrupted" // cancelled; cleaned up
	StateRemoved     = "removed"     // completed, then dropped (a --compare run)
)

// Record is one seeding in the history: like a row of sys.dm_hadr_automatic_seeding. Its
// layout lives in result so that the history table prints without the seeding engine.
type Record = result.SeedRecord

type historyDoc struct {
	Schema   int      `json:"schema"`
	Seedings []Record `json:"seedings"`
}

func historyPath(clusterDir string) string { return filepath.Join(clusterDir, HistoryFile) }

// History reads the seeding history of the cluster in clusterDir, oldest first.
func History(clusterDir string) ([]Record, error) {
	b, err := os.ReadFile(historyPath(clusterDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var d historyDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", historyPath(clusterDir), err)
	}
	if d.Schema > historySchema {
		return nil, fmt.Errorf("%s: schema %d is newer than this agbench reads (%d)", historyPath(clusterDir), d.Schema, historySchema)
	}
	return d.Seedings, nil
}

// putRecord adds r to the history (ID 0: a new record, whose ID it returns) or replaces the
// record of its ID, and writes the file atomically. The caller holds the cluster's lock.
func putRecord(clusterDir string, r *Record) error {
	recs, err := History(clusterDir)
	if err != nil {
		return err
	}
	if r.ID == 0 {
		for _, x := range recs {
			r.ID = max(r.ID, x.ID)
		}
		r.ID++
		recs = append(recs, *r)
	} else {
		found := false
		for i := range recs {
			if recs[i].ID == r.ID {
				recs[i], found = *r, true
			}
		}
		if !found {
			recs = append(recs, *r)
		}
	}
	b, err := json.MarshalIndent(historyDoc{Schema: historySchema, Seedings: recs}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(historyPath(clusterDir), append(b, '\n'), 0o644)
}
