package experiment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
)

// maxFolderTries bounds the search for a free results folder within one second.
const maxFolderTries = 1000

// Recorder owns one result's whole life. Make it with NewRecorder once the command line has
// been checked (bad input makes no folder), record steps as they end with Steps, and end it
// with Finish, which writes the result a last time and reports every write error.
type Recorder struct {
	// Result is the result being recorded; fill its Meta before the first step ends.
	Result *result.Result

	mu  sync.Mutex
	dir string
	// made is the outermost folder above dir that this run made ("" when dir's parent
	// was there): a run that leaves no folder leaves none of these either.
	made    string
	written bool
	werr    error
	ended   bool
	runErr  error
}

// NewRecorder starts the result of one run of command and reserves its folder under base:
// <base>/<UTC time>-<command>, or the same with -2, -3 ... when a run started in the same
// second already has that folder, so that two runs never write into one folder.
func NewRecorder(base, command, version string, args []string) (*Recorder, error) {
	r := &Recorder{Result: result.New(command, version, args)}
	path := result.RunDir(base, r.Result.Meta.Started, command)
	made := outermostMissing(filepath.Dir(path))
	dir, err := ReserveDir(path)
	if err != nil {
		return nil, err
	}
	r.dir, r.made = dir, made
	return r, nil
}

// outermostMissing is the outermost of dir and its parents that does not exist ("" when dir
// exists): what making dir makes.
func outermostMissing(dir string) string {
	missing := ""
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			return missing
		}
		missing = d
		if filepath.Dir(d) == d {
			return missing
		}
	}
}

// removeFolders removes the run's folder and the folders above it that the run made, each
// only while empty (another run may have written into them since).
func (r *Recorder) removeFolders() {
	_ = os.Remove(r.dir)
	if r.made == "" {
		return
	}
	for d := filepath.Dir(r.dir); ; d = filepath.Dir(d) {
		if os.Remove(d) != nil || d == r.made || filepath.Dir(d) == d {
			return
		}
	}
}

// ReserveDir makes the folder path, or path-2, path-3 ... when it exists, and returns the one
// it made: a folder that no other run of this or another agbench uses.
func ReserveDir(path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("results folder: %w", err)
	}
	for i := 1; ; i++ {
		try := path
		if i > 1 {
			try = fmt.Sprintf("%s-%d", path, i)
		}
		err := os.Mkdir(try, 0o755)
		if err == nil {
			return try, nil
		}
		if !errors.Is(err, os.ErrExist) || i >= maxFolderTries {
			return "", fmt.Errorf("results folder: %w", err)
		}
	}
}

// Dir is the run's folder.
func (r *Recorder) Dir() string { return r.dir }

// Path is the run's result file.
func (r *Recorder) Path() string { return filepath.Join(r.dir, result.FileName) }

// Save writes the result as it stands now, atomically. The first write error is kept and
// returned by Finish as well.
func (r *Recorder) Save() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saveLocked()
}

func (r *Recorder) saveLocked() error {
	_, err := result.Write(r.dir, r.Result)
	if err != nil {
		err = fmt.Errorf("write result %s: %w", r.Path(), err)
		if r.werr == nil {
			r.werr = err
		}
		return err
	}
	r.written = true
	return nil
}

// Steps replaces the result's steps with the steps measured so far and writes the result,
// so that a run that dies keeps what it measured.
func (r *Recorder) Steps(steps []result.Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Result.Steps = steps
	_ = r.saveLocked()
}

// AddStep appends one measured step and writes the result.
func (r *Recorder) AddStep(s result.Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Result.Steps = append(r.Result.Steps, s)
	_ = r.saveLocked()
}

// Warn adds run-level warnings (written with the next Save or at Finish).
func (r *Recorder) Warn(w ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Result.Warnings = append(r.Result.Warnings, w...)
}

// Analyse attaches internal/analyze's view of the run to the result and returns it; a run
// that cannot be analysed gets a warning that says why, and nil.
func (r *Recorder) Analyse(o analyze.Options) *analyze.Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.Result.Steps) == 0 {
		return nil
	}
	run, err := analyze.Attach(r.Result, o)
	if err != nil {
		r.Result.Warnings = append(r.Result.Warnings, "analysis: "+err.Error())
		return nil
	}
	return run
}

// End marks the result complete, or incomplete with runErr as the reason, and stamps its
// end time; the analysis attached after it sees the run as it ended. Finish writes it.
func (r *Recorder) End(runErr error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
	r.runErr = runErr
	r.Result.Finish(runErr)
}

// Finish ends the run (as End(nil) when End was not called) and writes the result a last
// time. A run that failed before it measured anything (no step, no run-level data) leaves
// no folder behind, neither its own nor the --results folder it made. It returns the result file's path ("" when nothing was ever written: an
// earlier write's file is kept when a later one failed) and the run's error joined with every
// write error of the run.
func (r *Recorder) Finish() (string, error) {
	if !r.ended {
		r.End(nil)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	runErr := r.runErr
	if runErr != nil && len(r.Result.Steps) == 0 && len(r.Result.Extra) == 0 && !r.written {
		r.removeFolders()
		return "", runErr
	}
	_ = r.saveLocked()
	if r.werr != nil {
		if r.written { // an earlier write holds what was measured up to then
			return r.Path(), errors.Join(runErr, r.werr)
		}
		return "", errors.Join(runErr, r.werr)
	}
	return r.Path(), runErr
}
