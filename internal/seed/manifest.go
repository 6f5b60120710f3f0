package seed

import (
	"encoding/json"
	"fmt"
	"os"
)

// ManifestBytes sums the sizes of the files listed in a backup_manifest (the JSON file
// pg_basebackup writes with every backup since PostgreSQL 13): the exact bytes of database
// files the backup copied, WAL excluded.
func ManifestBytes(data []byte) (int64, int, error) {
	var m struct {
		Version int `json:"PostgreSQL-Backup-Manifest-Version"`
		Files   []struct {
			Path string `json:"Path"`
			Size int64  `json:"Size"`
		} `json:"Files"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return 0, 0, fmt.Errorf("backup_manifest: %w", err)
	}
	if m.Version == 0 {
		return 0, 0, fmt.Errorf("backup_manifest: no PostgreSQL-Backup-Manifest-Version")
	}
	var total int64
	for _, f := range m.Files {
		if f.Size < 0 {
			return 0, 0, fmt.Errorf("backup_manifest: %s has size %d", f.Path, f.Size)
		}
		total += f.Size
	}
	return total, len(m.Files), nil
}

func manifestBytesOf(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, _, err := ManifestBytes(b)
	return n, err
}
