package report

import (
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/result"
)

// LoadRuns reads every result named (files, run folders, or folders of run folders), and
// reports every unreadable one at once.
func LoadRuns(args []string) ([]*Run, error) {
	var runs []*Run
	var errs []error
	for _, arg := range args {
		paths, err := ResultPaths(arg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range paths {
			r, err := result.Read(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			runs = append(runs, NewRun(filepath.Dir(p), r))
		}
	}
	return runs, agerr.Join(errs...)
}

// LoadCompared reads the results `agbench compare` is given: each a result file or a run's
// folder, labelled A and B when there are two. Every unreadable one is reported at once.
func LoadCompared(args []string) ([]*Run, error) {
	var runs []*Run
	var errs []error
	for i, arg := range args {
		r, err := result.Read(arg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		run := NewRun(arg, r)
		if len(args) == 2 {
			run.Label = string(rune('A' + i))
		}
		runs = append(runs, run)
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	return runs, nil
}

// ResultPaths expands an argument into result files: a file is itself, a run's folder its
// result.json, any other folder the result.json of each folder below it (sorted, so runs
// named by time come in the order they ran).
func ResultPaths(arg string) ([]string, error) {
	st, err := os.Stat(arg)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, agerr.BadInputf("%s: no such result file or folder", arg)
		}
		return nil, err
	}
	if !st.IsDir() {
		return []string{arg}, nil
	}
	own := filepath.Join(arg, result.FileName)
	if _, err := os.Stat(own); err == nil {
		return []string{own}, nil
	}
	var found []string
	err = filepath.WalkDir(arg, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == result.FileName {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, agerr.BadInputf("%s: no %s in this folder or below it", arg, result.FileName)
	}
	sort.Strings(found)
	return found, nil
}
