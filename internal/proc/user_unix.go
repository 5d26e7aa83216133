//go:build unix

package proc

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

func lookupUser(name string) (User, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return User{}, err
	}
	uid, err := parseID(u.Uid)
	if err != nil {
		return User{}, err
	}
	gid, err := parseID(u.Gid)
	if err != nil {
		return User{}, err
	}
	ids, err := u.GroupIds()
	if err != nil {
		return User{}, fmt.Errorf("its groups: %w", err)
	}
	groups := make([]uint32, 0, len(ids))
	for _, id := range ids {
		g, err := parseID(id)
		if err != nil {
			return User{}, err
		}
		groups = append(groups, g)
	}
	return User{Name: u.Username, UID: uid, GID: gid, Groups: groups, Home: u.HomeDir}, nil
}

func parseID(s string) (uint32, error) {
	id, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("id %q is not a number", s)
	}
	return uint32(id), nil
}

// asUser sets the credentials the child switches to between fork and
// exec. Root is checked here rather than left to the kernel's EPERM at
// Start, so the caller learns it before anything runs; a process that is
// u already needs no switch (and may not set its groups).
func asUser(cmd *exec.Cmd, u User) error {
	euid := os.Geteuid()
	if uint32(euid) == u.UID && euid != 0 {
		return nil
	}
	if euid != 0 {
		return fmt.Errorf("%w, and this process runs as uid %d", ErrNeedsRoot, euid)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: u.Groups}
	return nil
}
