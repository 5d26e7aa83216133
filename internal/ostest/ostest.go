// Package ostest runs parts of a test as a real second OS user, for tests
// of what another user may and may not do. It needs root (CI runs as root)
// and useradd and setpriv; without them the test is skipped, saying why.
package ostest

import (
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// UserName is the account the tests act as; it is created on first use.
const UserName = "agenttree-other"

// User is the second OS user.
type User struct {
	Name     string
	UID, GID int
}

// OtherUser returns the second user, creating it if needed, or skips t.
func OtherUser(t testing.TB) User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting as another OS user needs root")
	}
	for _, tool := range []string{"useradd", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("acting as another OS user needs %s", tool)
		}
	}
	u, err := user.Lookup(UserName)
	if err != nil {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", UserName).CombinedOutput()
		if err != nil {
			// Another test process may have created it meanwhile.
			if u, err = user.Lookup(UserName); err != nil {
				t.Fatalf("useradd %s: %s", UserName, out)
			}
		} else if u, err = user.Lookup(UserName); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return User{Name: UserName, UID: uid, GID: gid}
}

// Command runs name with args as u, with no supplementary groups.
func (u User) Command(name string, args ...string) *exec.Cmd {
	full := append([]string{"--reuid=" + strconv.Itoa(u.UID), "--regid=" + strconv.Itoa(u.GID), "--clear-groups", "--", name}, args...)
	return exec.Command("setpriv", full...)
}

// Executable copies the running test binary where u can run it (the
// build directory is private to its owner) and returns its path. Tests
// re-run it as u with a flag or an environment variable that selects what
// it does.
func Executable(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Install(t, self)
}

// Install copies the program at path where every user can run it and
// returns the copy's path.
func Install(t testing.TB, path string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agenttree-ostest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(path))
	if err := copyFile(path, dst, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// OpenUp lets every user reach dir: it and each directory above it up to
// the system's temporary directory (where tests make theirs, private to
// their owner) get the search and read bits.
func OpenUp(t testing.TB, dir string) {
	t.Helper()
	stop := filepath.Clean(os.TempDir())
	if rel, err := filepath.Rel(stop, dir); err != nil || !filepath.IsLocal(rel) {
		t.Fatalf("OpenUp opens directories under %s only, not %s", stop, dir)
	}
	for d := filepath.Clean(dir); d != stop && d != filepath.Dir(d); d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, fi.Mode().Perm()|0o055); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
