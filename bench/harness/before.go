package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CacheDir is where built binaries are kept between runs: $AGBENCH_CACHE, else the user's
// cache folder's agbench/.
func CacheDir() (string, error) {
	if c := os.Getenv("AGBENCH_CACHE"); c != "" {
		return c, nil
	}
	user, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder (set AGBENCH_CACHE): %w", err)
	}
	return filepath.Join(user, "agbench"), nil
}

// git runs git in the repository that holds this program's source (the current folder) and
// returns its trimmed output.
func git(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// BeforeRevision resolves the revision the new binary is measured against: rev when given,
// else the merge base of HEAD and main (on main itself, HEAD: the binary against its own
// source, which measures the bench's noise).
func BeforeRevision(ctx context.Context, rev string) (string, error) {
	if rev == "" {
		base, err := git(ctx, "merge-base", "HEAD", "main")
		if err != nil {
			return "", err
		}
		rev = base
	}
	return git(ctx, "rev-parse", "--verify", rev+"^{commit}")
}

// BuildBefore returns the agbench binary built from commit, building it first where the
// cache does not hold it: the commit is checked out into a temporary worktree (detached,
// removed afterwards) and built as `make build` builds, its version the commit's short id.
func BuildBefore(ctx context.Context, commit string) (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, "agbench-"+commit, "agbench")
	if st, err := os.Stat(bin); err == nil && st.Mode()&0o111 != 0 {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "agbench-before-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "src")
	fmt.Fprintf(os.Stderr, "building agbench %.12s (the before binary) in a temporary worktree into %s\n", commit, filepath.Dir(bin))
	if _, err := git(ctx, "worktree", "add", "--detach", tree, commit); err != nil {
		return "", err
	}
	defer func() {
		if _, err := git(context.WithoutCancel(ctx), "worktree", "remove", "--force", tree); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
	}()
	build := exec.CommandContext(ctx, "go", "build", "-ldflags", "-X main.version="+commit[:7], "-o", bin+".tmp", "./cmd/agbench")
	build.Dir = tree
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build agbench %.12s: %v\n%s", commit, err, out)
	}
	return bin, os.Rename(bin+".tmp", bin)
}
