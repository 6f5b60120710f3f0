package main

import (
	"path/filepath"
	"testing"
)

// TestSegmentBadInput checks that a segment the flags or the environment put out of range,
// or a split that leaves a segment without load, is refused before anything is made.
func TestSegmentBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	primary := []string{"--primary", "postgres://127.0.0.1:1/x", "--results", res}
	wantRefused(t, nil, filepath.Join(res, "*"), []badInput{
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segment", "3/3"}, "--segment \"3/3\": index 3 out of range"},
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segment", "1"}, "want INDEX/SEGMENTS"},
		{[]string{"stress", "-q", "SELECT 1", "--threads", "2", "--segment", "0/3"}, "--threads 2 with --segment 0/3: every segment needs at least one"},
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segment", "0/3", "--segments", "2"}, "not the same number of segments"},
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segments", "3"}, "give --segment I/3 or set $JOB_COMPLETION_INDEX"},
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segment", "0/3", "--init", "10"}, "--init with --segment"},
		{[]string{"scan", "--threads", "3", "--segment", "0/3", "--segment-timeout", "0s"}, "--segment-timeout 0s"},
		{[]string{"tpcc", "run", "--vus", "4,2", "--segment", "1/3"}, "--vus 2 with --segment 1/3"},
		{[]string{"tpcc", "run", "--vus", "3", "--segment", "1/3", "--check"}, "--check with --segment"},
	}, primary...)
	wantRefused(t, map[string]string{"JOB_COMPLETION_INDEX": "3"}, filepath.Join(res, "*"), []badInput{
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segments", "3"}, "--segment \"3/3\": index 3 out of range"},
	}, primary...)
}
