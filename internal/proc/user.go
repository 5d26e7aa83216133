package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// User is an OS user that commands can run as (AsUser), as LookupUser
// found it.
type User struct {
	Name     string
	UID, GID uint32
	// Groups are the user's supplementary groups, its primary group
	// among them.
	Groups []uint32
	// Home is the user's home directory, which becomes the command's
	// HOME.
	Home string
}

// ErrNeedsRoot is what AsUser reports when this process may not start
// processes as another user: only root may.
var ErrNeedsRoot = errors.New("only root may run commands as another user")

// LookupUser finds the OS user name in the system's user database (on
// Unix; elsewhere it reports that commands cannot run as another user).
func LookupUser(name string) (User, error) {
	u, err := lookupUser(name)
	if err != nil {
		return User{}, fmt.Errorf("user %s: %w", name, err)
	}
	return u, nil
}

// AsUser makes cmd run as u: its uid, its primary group and its
// supplementary groups, with HOME, USER and LOGNAME in cmd.Env (nil: this
// process's environment) set to u's, as `runuser -l` would. Set cmd.Env
// before calling it. It merges with what Group, GroupGraceful and Detach
// set, in any order.
//
// Only root may switch users: from any other user, AsUser reports
// ErrNeedsRoot and leaves cmd unchanged, unless u is this process's own
// user. Where commands cannot run as another user (Windows, plan9, wasm)
// it reports errors.ErrUnsupported. Either way the caller must not run
// cmd: it would run as this process's user.
func AsUser(cmd *exec.Cmd, u User) error {
	if err := asUser(cmd, u); err != nil {
		return fmt.Errorf("run %s as %s: %w", cmd.Args[0], u.Name, err)
	}
	cmd.Env = userEnv(cmd.Environ(), u)
	return nil
}

// userEnv is env with u's HOME, USER and LOGNAME in place of the ones
// there.
func userEnv(env []string, u User) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "HOME", "USER", "LOGNAME":
		default:
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+u.Home, "USER="+u.Name, "LOGNAME="+u.Name)
}
