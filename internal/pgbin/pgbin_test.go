package pgbin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
)

func TestParseVersion(t *testing.T) {
	cases := []struct {
		in    string
		v     string
		major int
		ok    bool
	}{
		{"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n", "15.18", 15, true},
		{"postgres (PostgreSQL) 18.6", "18.6", 18, true},
		{"postgres (PostgreSQL) 17devel", "17", 17, true},
		{"something else", "", 0, false},
	}
	for _, c := range cases {
		v, m, err := ParseVersion(c.in)
		if (err == nil) != c.ok || v != c.v || m != c.major {
			t.Errorf("ParseVersion(%q) = %q, %d, %v", c.in, v, m, err)
		}
	}
}

func TestFindExplicitBadDir(t *testing.T) {
	_, err := Find(context.Background(), t.TempDir())
	if !agerr.IsBadInput(err) {
		t.Fatalf("want bad input for a folder without binaries, got %v", err)
	}
}

func TestFindInstalled(t *testing.T) {
	in, err := Find(context.Background(), "")
	if err != nil {
		t.Skipf("no PostgreSQL here: %v", err)
	}
	if in.Major < 13 || in.Version == "" {
		t.Fatalf("odd install %+v", in)
	}
	t.Logf("found PostgreSQL %s in %s", in.Version, in.BinDir)
}

// A cancelled command ends with its whole process group, even when a child it forked holds
// the output pipe (as pg_basebackup's WAL receiver does).
func TestCancelKillsTheProcessGroup(t *testing.T) {
	u, err := ResolveOSUser("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := u.Command(ctx, "/bin/sh", "-c", "sleep 300 & sleep 300")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Cancelled once the shell has forked its background child (a fixed 200 ms wait could
	// cancel a shell not yet started on a busy machine, and prove nothing).
	waitGroupOf(t, cmd.Process.Pid, func(n int) bool { return n >= 2 }, "the shell's background child never started")
	cancel()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Wait did not return after cancel: a forked child kept the pipe open")
	}
	// A killed process closes its files (the pipe, so Wait returned) before it becomes a
	// zombie: it may show as running for a moment after Wait. The sleeps would live 300 s.
	waitGroupOf(t, cmd.Process.Pid, func(n int) bool { return n == 0 }, "processes of the cancelled command's group are still alive")
}

// waitGroupOf waits up to a minute until the count of live processes in a process group
// satisfies ok, and fails the test with why otherwise.
func waitGroupOf(t *testing.T, pgid int, ok func(int) bool, why string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		n := liveInGroup(pgid)
		if ok(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d live processes in group %d", why, n, pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// liveInGroup counts the processes of a process group that are alive (zombies, which a
// slow-reaping init leaves for a while, do not count).
func liveInGroup(pgid int) int {
	n := 0
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		fields := strings.Fields(s[i+1:]) // state, ppid, pgrp, ...
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" {
			n++
		}
	}
	return n
}

// A file that the server removes while its data folder is given to its user needs no owner:
// the walk passes over it (a drill's end once failed on a dropped table's file that the
// checkpoint removed meanwhile). The folder itself must be there.
func TestOwnPassesOverFilesRemovedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var owned []string
	err := own(dir, func(p string) error {
		owned = append(owned, filepath.Base(p))
		if filepath.Base(p) == "a" {
			return os.Remove(filepath.Join(dir, "b")) // removed after the folder was read
		}
		return nil
	})
	if err != nil || strings.Join(owned, " ") != filepath.Base(dir)+" a" {
		t.Fatalf("own: %v, owned %v", err, owned)
	}
	if err := own(filepath.Join(dir, "gone"), func(string) error { return nil }); err == nil {
		t.Fatal("own of a missing folder: no error")
	}
}
