package configref

import (
	"path/filepath"

	"github.com/agenttree/agenttree/internal/statedir"
)

// StateFile is a file or directory agenttree keeps in the state directory.
type StateFile struct {
	Path   string
	Writer string
	Doc    string
}

// StateFiles lists what lives under _agenttree/, the state directory next
// to .agenttree.yaml, with the paths of its layout (internal/statedir).
func StateFiles() []StateFile {
	l := statedir.Layout{Root: "_agenttree"}
	const id = 1
	issue := l.Issue(id)
	return []StateFile{
		{l.Docs(id) + "/", "agents", "The issue's stage documents (review.md, spec.md, ci_feedback.md, ...): what gates read. Group-writable."},
		{filepath.Dir(l.Socket()) + "/", "the controller", "The controller's socket (controller.sock): the one door agents of another user or a container have."},
		{l.Host() + "/", "people and the controller", "What only the host writes; agents may read it."},
		{filepath.Join(issue, "issue.yaml"), "agenttree", "The issue: its stage, version, PR, counters and history."},
		{filepath.Join(issue, "events.jsonl"), "agenttree", "Every change of the issue, append-only, a hash chain whose head issue.yaml carries."},
		{filepath.Join(issue, "watch.yaml"), "the controller", "What the controller knows of the issue's PR and CI between ticks."},
		{filepath.Join(issue, "outbox") + "/", "agenttree", "Messages for the issue's agent not delivered yet."},
		{filepath.Join(l.HostIssues(), ".last-id"), "agenttree", "The last issue number given."},
		{l.Forge() + "/", "the local forge", "PRs (prs/) and CI runs with their logs (checks/) of `forge: local`."},
		{l.Sessions() + "/", "agenttree", "Agent session tokens (hashes only)."},
		{l.ControllerLock(), "the controller", "Held by the one controller of the state directory."},
		{l.BoardURL(), "the controller", "The URL, login token included, of the board `controller --http` serves: its owner's alone (0600), removed when the controller stops."},
		{filepath.Join(l.Host(), "layout"), "agenttree", "The layout's version; an older layout is migrated on first use."},
		{"_agenttree/skills/", "people", "Stage instructions (`skill:` files), such as the defaults `agenttree init` writes."},
		{"_agenttree/templates/", "people", "Templates of `create_file`, looked for here first."},
	}
}
