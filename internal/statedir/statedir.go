// Package statedir is the layout of a state directory (`_agenttree/`): what
// agents may write and what only the host writes live apart, so that file
// permissions can say so (DESIGN §8, §10).
//
//	_agenttree/
//	  issues/NNN/          stage documents, written by agents (group-writable)
//	  controller.sock      the controller's API, the one door agents have
//	  host/                written by people and the controller only
//	    issues/NNN/        issue.yaml, events.jsonl, watch.yaml, outbox/
//	    issues/.last-id    the last id given
//	    forge/             the local forge's PRs, CI results and locks
//	    sessions/          agent session tokens (hashes only)
//	    controller.lock
//
// The first layout kept the host's files beside the documents; Migrate
// moves them, losing nothing.
package statedir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/identity"
)

const (
	// DocsMode is an issue's documents directory: agents of another OS
	// user in the state directory's group write there; the set-group-id
	// bit keeps what they write in that group, so the host reads it.
	DocsMode = 0o775 | os.ModeSetgid
	// HostMode is every directory under host/: the owner writes, everyone
	// reads (people's other tools, and agents through `status`).
	HostMode = 0o755
)

// Layout names the parts of the state directory at Root.
type Layout struct{ Root string }

// Docs is the directory of issue id's stage documents.
func (l Layout) Docs(id int) string { return filepath.Join(l.Root, "issues", dirName(id)) }

// Host is the directory only the host writes.
func (l Layout) Host() string { return filepath.Join(l.Root, "host") }

// HostIssues holds the host's files of every issue.
func (l Layout) HostIssues() string { return filepath.Join(l.Host(), "issues") }

// Issue is the directory of issue id's own files.
func (l Layout) Issue(id int) string { return filepath.Join(l.HostIssues(), dirName(id)) }

// Forge is the local forge's directory.
func (l Layout) Forge() string { return filepath.Join(l.Host(), "forge") }

// Sessions holds the agent session tokens.
func (l Layout) Sessions() string { return filepath.Join(l.Host(), "sessions") }

// ControllerLock is the controller's lock file.
func (l Layout) ControllerLock() string { return filepath.Join(l.Host(), "controller.lock") }

// Socket is where the controller listens for agents.
func (l Layout) Socket() string { return filepath.Join(l.Root, "controller.sock") }

func dirName(id int) string { return fmt.Sprintf("%03d", id) }

// ownFiles are the host's files of an issue in the first layout.
var ownFiles = []string{"issue.yaml", "events.jsonl", "watch.yaml", "outbox", ".lock"}

// Migrate moves a first-layout state directory's host files under host/.
// It runs under a lock and is safe to run again after a crash: each file
// moves by one rename, one already moved is left alone, and the marker
// that says the layout is current is written last. A state directory
// that does not exist yet is left alone.
func (l Layout) Migrate(ctx context.Context) error {
	if _, err := os.Stat(l.marker()); err == nil {
		return nil
	}
	docs := filepath.Join(l.Root, "issues")
	if _, err := os.Stat(l.Root); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := os.MkdirAll(l.Host(), HostMode); err != nil {
		return fmt.Errorf("make %s: %w", l.Host(), err)
	}
	unlock, err := atomicfile.Lock(ctx, filepath.Join(l.Host(), ".layout.lock"), 30*time.Second, "the state directory's layout")
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(l.marker()); err == nil {
		return nil // another process migrated meanwhile
	}
	entries, err := os.ReadDir(docs)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	moves := [][2]string{
		{filepath.Join(docs, ".last-id"), filepath.Join(l.HostIssues(), ".last-id")},
		{filepath.Join(l.Root, "forge"), l.Forge()},
		{filepath.Join(l.Root, "controller.lock"), l.ControllerLock()},
	}
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil || id <= 0 || !e.IsDir() {
			continue
		}
		for _, name := range ownFiles {
			moves = append(moves, [2]string{filepath.Join(docs, e.Name(), name), filepath.Join(l.Issue(id), name)})
		}
	}
	for _, m := range moves {
		if err := move(m[0], m[1]); err != nil {
			return fmt.Errorf("migrate %s to the layout with host/: %w", l.Root, err)
		}
	}
	// The host's mount namespace, so that a process in another one (an
	// agent's container) is known for one.
	return atomicfile.WriteYAML(l.marker(), marker{Layout: 2, HostMountNamespace: identity.Namespace()}, 0o644)
}

// marker is host/layout.
type marker struct {
	Layout             int    `yaml:"layout"`
	HostMountNamespace string `yaml:"host_mount_namespace,omitempty"`
}

// HostNamespace is the mount namespace the state directory was set up in
// ("" when not recorded).
func (l Layout) HostNamespace() string {
	var m marker
	if err := atomicfile.ReadYAML(l.marker(), &m); err != nil {
		return ""
	}
	return m.HostMountNamespace
}

// marker says the state directory has the current layout.
func (l Layout) marker() string { return filepath.Join(l.Host(), "layout") }

// move renames src to dst, making dst's directory; a src that is gone
// (never there, or moved by another process) is no error.
func move(src, dst string) error {
	if _, err := os.Lstat(src); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := os.Lstat(dst); err == nil {
		return nil // never over what the current layout holds
	}
	if err := os.MkdirAll(filepath.Dir(dst), HostMode); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// MkdirDocs makes issue id's documents directory with DocsMode (MkdirAll
// alone would lose the group bits to the umask).
func (l Layout) MkdirDocs(id int) error {
	dir := l.Docs(id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.Chmod(dir, DocsMode)
}
