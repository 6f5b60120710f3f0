package pgbin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/agbench/agbench/internal/agerr"
)

// OSUser is the operating-system user that PostgreSQL processes run as. The zero value and
// nil both mean "the user agbench runs as".
type OSUser struct {
	Name string `json:"name"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	// Switch is true when commands must change to this user (agbench runs as root).
	Switch bool `json:"switch"`
}

// ResolveOSUser chooses the user servers run as. When agbench is not root it is the current
// user and name must be empty or match. As root it is name, or "postgres" when name is empty.
func ResolveOSUser(name string) (*OSUser, error) {
	cur, err := user.Current()
	if err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		if name != "" && name != cur.Username {
			return nil, agerr.BadInputf("--os-user %s: only root can run servers as another user (you are %s)", name, cur.Username)
		}
		uid, _ := strconv.Atoi(cur.Uid)
		gid, _ := strconv.Atoi(cur.Gid)
		return &OSUser{Name: cur.Username, UID: uid, GID: gid}, nil
	}
	if name == "" {
		name = "postgres"
	}
	if name == "root" {
		return nil, agerr.BadInputf("--os-user root: PostgreSQL refuses to run as root; name an unprivileged user")
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, agerr.BadInputf("agbench runs as root, so PostgreSQL must run as an unprivileged user, but user %q does not exist: "+
			"create it (adduser --system %s) or pass --os-user NAME", name, name)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &OSUser{Name: name, UID: uid, GID: gid, Switch: true}, nil
}

// cancelWaitDelay bounds how long a cancelled command's output pipes are waited for.
const cancelWaitDelay = 5 * time.Second

// Command builds a command that runs as this user in its own process group, so a Ctrl-C
// at the terminal reaches agbench alone and agbench decides what to stop.
func (u *OSUser) Command(ctx context.Context, path string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// On cancellation kill the whole process group: pg_basebackup -X stream forks a WAL
	// receiver that would otherwise live on, holding the output pipe open so that Wait never
	// returns. WaitDelay bounds the wait for such pipes all the same.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = cancelWaitDelay
	cmd.Env = os.Environ()
	if u != nil && u.Switch {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID)}
		cmd.Env = append(cmd.Env, "HOME="+os.TempDir(), "USER="+u.Name, "LOGNAME="+u.Name)
	}
	return cmd
}

// Own gives path (and everything under it) to this user, when agbench switches users.
func (u *OSUser) Own(path string) error {
	if u == nil || !u.Switch {
		return nil
	}
	return own(path, func(p string) error { return os.Lchown(p, u.UID, u.GID) })
}

// own calls chown on path and everything under it. A file that is gone by the time the walk
// reaches it is passed over: agbench gives a running server's data folder to its user (after
// rewriting agbench.conf), and the server removes files meanwhile (a dropped table's, at the
// next checkpoint; a standby's, as it replays the drop), which needs no owner. path itself
// must be there.
func own(path string, chown func(string) error) error {
	return filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = chown(p)
		}
		if err != nil && p != path && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	})
}

// CheckReach makes sure this user can reach dir: every parent must let it pass. It returns
// bad input naming the first folder in the way.
func (u *OSUser) CheckReach(dir string) error {
	if u == nil || !u.Switch {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err == nil && !canTraverse(st, u) {
			return agerr.BadInputf("user %s, which runs PostgreSQL, cannot enter %s (mode %v); choose a folder it can reach with AGBENCH_HOME, or chmod o+x %s",
				u.Name, p, st.Mode().Perm(), p)
		}
		if p == "/" || p == "." {
			return nil
		}
	}
}

func canTraverse(st os.FileInfo, u *OSUser) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	m := st.Mode().Perm()
	switch {
	case int(sys.Uid) == u.UID:
		return m&0o100 != 0
	case int(sys.Gid) == u.GID:
		return m&0o010 != 0
	default:
		return m&0o001 != 0
	}
}

// String names the user for messages.
func (u *OSUser) String() string {
	if u == nil {
		return "(current user)"
	}
	return fmt.Sprintf("%s (uid %d)", u.Name, u.UID)
}
