package statedir

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/internal/identity"
)

// Who may have written a file is told by its owner and permission bits,
// and by those of every directory above it: whoever may write a directory
// may rename what is in it and put something else in its place. The
// host's files are those only the host (the state directory's owner) or
// root could have written (docs/SECURITY.md).

// Exposed says how someone other than the host (uid host) could have
// written the file or directory fi describes: its owner is another user
// (root is allowed when rootOK), or its group or everyone may write it, or
// it is a symbolic link (agenttree makes none). "" when only its owner
// could have. Where the system keeps no Unix owners it says nothing.
func Exposed(fi fs.FileInfo, host int, rootOK bool) string {
	uid, gid, ok := identity.FileOwner(fi)
	if !ok {
		return ""
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return "it is a symbolic link"
	case uid != host && !(rootOK && uid == 0):
		return fmt.Sprintf("it is owned by %s, not by the state directory's owner (%s)", UserName(uid), UserName(host))
	case fi.Mode().Perm()&0o002 != 0:
		return fmt.Sprintf("everyone may write it (%s)", ModeString(fi.Mode()))
	case fi.Mode().Perm()&0o020 != 0:
		return fmt.Sprintf("its group %s may write it (%s)", GroupName(gid), ModeString(fi.Mode()))
	}
	return ""
}

// ExposedAncestor is Exposed for a directory above the state directory:
// it may be root's or the host's. One with the sticky bit (as /tmp) that
// others may write lets them make new names in it, but not rename or
// remove what its owner, root or the host owns there: it exposes nothing.
func ExposedAncestor(fi fs.FileInfo, host int) string {
	uid, _, ok := identity.FileOwner(fi)
	if ok && Sticky(fi) && (uid == host || uid == 0) {
		return ""
	}
	return Exposed(fi, host, true)
}

// Sticky says whether fi is a directory with the sticky bit.
func Sticky(fi fs.FileInfo) bool { return fi.IsDir() && fi.Mode()&fs.ModeSticky != 0 }

// Ancestors are the directories above dir, from / down.
func Ancestors(dir string) []string {
	var up []string
	for d := filepath.Dir(filepath.Clean(dir)); ; d = filepath.Dir(d) {
		up = append(up, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	for i, j := 0, len(up)-1; i < j; i, j = i+1, j-1 {
		up[i], up[j] = up[j], up[i]
	}
	return up
}

// HostUID is the host's user: the state directory's owner.
func (l Layout) HostUID() (int, error) { return identity.Owner(l.Root) }

// rootExposure says how someone other than the host could replace the
// state directory or what it holds: the state directory is not the host's
// alone, or a directory above it is another user's or writable by others
// (ExposedAncestor). "" when neither.
func (l Layout) rootExposure(host int) string {
	for _, dir := range Ancestors(l.Root) {
		fi, err := os.Stat(dir)
		if err != nil {
			return fmt.Sprintf("%s cannot be read (%v)", dir, err)
		}
		if why := ExposedAncestor(fi, host); why != "" {
			return dir + ": " + why
		}
	}
	fi, err := os.Lstat(l.Root)
	if err != nil {
		return fmt.Sprintf("%s cannot be read (%v)", l.Root, err)
	}
	if why := Exposed(fi, host, false); why != "" {
		return l.Root + ": " + why
	}
	return ""
}

// within says how someone other than the host could have put path (inside
// the state directory) where it is, or written it: a directory between
// the state directory and path is not the host's or root's alone, or path
// is not the host's alone (a directory of it may be root's). "" when only
// the host could have.
func (l Layout) within(host int, path string) string {
	rel, err := filepath.Rel(l.Root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return path + " is not inside " + l.Root
	}
	parts := strings.Split(rel, string(filepath.Separator))
	dir := l.Root
	for i, part := range parts {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		if err != nil {
			return fmt.Sprintf("%s cannot be read (%v)", dir, err)
		}
		rootOK := fi.IsDir()
		if why := Exposed(fi, host, rootOK); why != "" {
			if i < len(parts)-1 {
				return fmt.Sprintf("it is in %s, and %s", dir, why)
			}
			return why
		}
	}
	return ""
}

// HostOnly says how someone other than the host could have written path,
// inside the state directory, or put it there (see rootExposure and
// within); "" when only the host could have. Adopting state as the host's
// (a migration from the first layout) takes only what it clears.
func (l Layout) HostOnly(path string) string {
	host, err := l.HostUID()
	if err != nil {
		return fmt.Sprintf("the state directory's owner cannot be told (%v)", err)
	}
	if why := l.rootExposure(host); why != "" {
		return why
	}
	return l.within(host, path)
}

// UserName names uid for people: "alice (uid 1000)", or "uid 1000".
func UserName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

// GroupName names gid for people: "agents (gid 1001)", or "gid 1001".
func GroupName(gid int) string {
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return fmt.Sprintf("%s (gid %d)", g.Name, gid)
	}
	return fmt.Sprintf("gid %d", gid)
}

// FirstLayoutLeftovers are the first layout's host files still outside
// host/ once the state directory has the current layout: what a migration
// left alone, or what was put there since. Nothing reads or adopts them.
func (l Layout) FirstLayoutLeftovers() []string {
	if _, found := l.readMarker(); !found {
		return nil // not migrated yet
	}
	var left []string
	for _, m := range l.firstLayoutMoves() {
		left = append(left, m[0])
	}
	return left
}

// ModeString is m as ls shows it (drwxrwsr-x).
func ModeString(m fs.FileMode) string {
	b := []byte("?rwxrwxrwx")
	switch {
	case m.IsDir():
		b[0] = 'd'
	case m&fs.ModeSymlink != 0:
		b[0] = 'l'
	case m.IsRegular():
		b[0] = '-'
	}
	for i := range 9 {
		if m&(1<<(8-i)) == 0 {
			b[i+1] = '-'
		}
	}
	special := func(i int, set bool, on, off byte) {
		if !set {
			return
		}
		if b[i] == 'x' {
			b[i] = on
		} else {
			b[i] = off
		}
	}
	special(3, m&fs.ModeSetuid != 0, 's', 'S')
	special(6, m&fs.ModeSetgid != 0, 's', 'S')
	special(9, m&fs.ModeSticky != 0, 't', 'T')
	return string(b)
}
