package result

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/atomicfile"
)

// New returns a result for a command starting now, with the host described and the
// command line's credentials removed. It is marked incomplete until the command says otherwise.
func New(command, toolVersion string, args []string) *Result {
	return &Result{
		Schema: SchemaVersion,
		Meta: Meta{
			Tool: "agbench", ToolVersion: toolVersion, Command: command,
			Args: RedactArgs(args), Started: time.Now().UTC(), Host: CollectHost(),
		},
		IncompleteReason: "not finished",
	}
}

// RunDir returns the folder of a run under base: <base>/<UTC time>-<command>, with the
// command's spaces as dashes ("tpcc run" -> "tpcc-run").
func RunDir(base string, started time.Time, command string) string {
	name := started.UTC().Format("20060102T150405Z") + "-" + strings.ReplaceAll(strings.TrimSpace(command), " ", "-")
	return filepath.Join(base, name)
}

// Write writes r as dir/result.json atomically, making dir if needed, and returns the path.
// A reader sees the previous complete file or the new one, never a part; commands may write
// after every step so that a run that dies keeps what it measured.
func Write(dir string, r *Result) (string, error) {
	if r.Schema == 0 {
		r.Schema = SchemaVersion
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode result: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, FileName)
	if err := atomicfile.Write(path, append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// Read reads a result file, or the result.json in a run's folder. A file that is not a
// result, or is of a newer schema than this agbench reads, is bad input.
func Read(path string) (*Result, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, FileName)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, agerr.BadInputf("%s: no such result file", path)
		}
		return nil, err
	}
	r, err := Decode(b)
	if err != nil {
		return nil, agerr.BadInputf("%s: %w", path, err)
	}
	return r, nil
}

// Decode parses the bytes of a result file and checks its schema version and every section
// of Extra whose type this package declares: a section that does not decode is an error
// naming it (`step 3 extra "sample": json: ...`), never an empty section later.
func Decode(b []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("not a result file: %w", err)
	}
	switch {
	case r.Schema == 0:
		return nil, fmt.Errorf("not a result file: no schema version")
	case r.Schema > SchemaVersion:
		return nil, fmt.Errorf("result schema %d is newer than this agbench reads (%d)", r.Schema, SchemaVersion)
	}
	if err := r.CheckExtras(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Finish marks the result complete, or incomplete with the reason taken from err, and
// stamps the end time.
func (r *Result) Finish(err error) {
	r.Meta.Ended = time.Now().UTC()
	r.Complete = err == nil
	r.IncompleteReason = ""
	if err != nil {
		r.IncompleteReason = err.Error()
	}
}
