// Package statedir is the layout of a state directory (`_agenttree/`): what
// agents may write and what only the host writes live apart, so that file
// permissions can say so (docs/ARCHITECTURE.md §8, §10).
//
//	_agenttree/
//	  issues/NNN/          stage documents, written by agents (group-writable)
//	  run/controller.sock  the controller's API, the one door agents have
//	  host/                written by people and the controller only
//	    issues/NNN/        issue.yaml, events.jsonl, watch.yaml, outbox/
//	    issues/.last-id    the last id given
//	    issues/.scan-cache what the last scan read of each issue (a cache)
//	    forge/             the local forge: prs/ and checks/ (records, each
//	                       with its log), locks/
//	    sessions/          agent session tokens (hashes only)
//	    agents/            agents' session records, and the files handing
//	                       each agent its token
//	    controller.lock
//	    layout             the layout's version, the host's mount namespace
//
// The first layout kept the host's files beside the documents; Migrate
// moves them, losing nothing.
package statedir

import (
	"fmt"
	"os"
	"path/filepath"
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

// ForgePRs holds the local forge's PR records.
func (l Layout) ForgePRs() string { return filepath.Join(l.Forge(), "prs") }

// ForgeChecks holds the local forge's CI records.
func (l Layout) ForgeChecks() string { return filepath.Join(l.Forge(), "checks") }

// Sessions holds the agent session tokens.
func (l Layout) Sessions() string { return filepath.Join(l.Host(), "sessions") }

// ControllerLock is the controller's lock file.
func (l Layout) ControllerLock() string { return filepath.Join(l.Host(), "controller.lock") }

// BoardURL is where `controller --http` leaves its board's URL, login
// token included, for the person to read: the owner's alone (0600), as
// the controller's log, which names the file, may be anyone's
// (docs/SECURITY.md, "The board").
func (l Layout) BoardURL() string { return filepath.Join(l.Host(), "board.url") }

// RateLimit is where the controller keeps the forge's rate limit as it
// last answered, for `status` and the board to show without asking.
func (l Layout) RateLimit() string { return filepath.Join(l.Host(), "ratelimit.json") }

// Node names the node that runs this checkout's agents
// (`agenttree node`, state.nodes), written when it joins.
func (l Layout) Node() string { return filepath.Join(l.Host(), "node") }

// Socket is where the controller listens for agents. It has a directory
// of its own, which containers mount: a controller that restarts makes a
// new socket file, which a mount of the old file would not see.
func (l Layout) Socket() string { return filepath.Join(l.Root, "run", "controller.sock") }

func dirName(id int) string { return fmt.Sprintf("%03d", id) }

// MkdirDocs makes issue id's documents directory with DocsMode (MkdirAll
// alone would lose the group bits to the umask).
func (l Layout) MkdirDocs(id int) error {
	dir := l.Docs(id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.Chmod(dir, DocsMode)
}
