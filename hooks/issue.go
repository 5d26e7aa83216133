package hooks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/stages"
)

// Issue is the read-only view of an issue a hook gets.
type Issue struct {
	ID       int
	Slug     string
	Title    string
	Flow     string
	Stage    string
	Branch   string
	PRNumber int
	PRURL    string
	HeadSHA  string
	Labels   []string
	Vars     map[string]any
	Outputs  map[string]string
	History  []Event
	// Watch is the hooks' private state from earlier calls (see Outcome.Watch).
	Watch map[string]string

	// Dir is the issue's directory, where agents write stage documents.
	Dir string
	// WorkDir is the git work tree the issue's code lives in.
	WorkDir string
	// DefaultBranch is the branch PRs merge into.
	DefaultBranch string
}

// Event is one entry of the issue's history.
type Event struct {
	From, To string
	Kind     stages.Move
	Actor    string
	Reason   string
	At       time.Time
}

// Var is one of the variables every issue provides to conditions and
// messages, read from its own fields.
type Var struct {
	Name  string
	value func(*Issue) any
	// noneIfZero: a zero value means the issue has none yet (no PR), and
	// messages leave the variable to an output of the same name.
	noneIfZero bool
}

// Value is the variable's value as conditions see it (an int, a string,
// a list).
func (v Var) Value(i *Issue) any { return v.value(i) }

// Text is the variable's value as messages see it; ok is false when the
// issue has none.
func (v Var) Text(i *Issue) (text string, ok bool) {
	x := v.value(i)
	if v.noneIfZero && x == 0 {
		return "", false
	}
	return toString(x), true
}

// issueVars is the table of the issue's own variables, in the order they
// are documented.
var issueVars = []Var{
	{Name: "issue_id", value: func(i *Issue) any { return i.ID }},
	{Name: "issue_title", value: func(i *Issue) any { return i.Title }},
	{Name: "stage", value: func(i *Issue) any { return i.Stage }},
	{Name: "flow", value: func(i *Issue) any { return i.Flow }},
	{Name: "branch", value: func(i *Issue) any { return i.Branch }},
	{Name: "labels", value: func(i *Issue) any { return i.Labels }},
	{Name: "pr_number", value: func(i *Issue) any { return i.PRNumber }, noneIfZero: true},
	{Name: "pr_url", value: func(i *Issue) any { return i.PRURL }},
	{Name: "head_sha", value: func(i *Issue) any { return i.HeadSHA }},
}

// IssueVars lists the issue's own variables in the order they are
// documented. Conditions and messages (and the environment of `run`) are
// all built from this one table, and the config loader learns their names
// from it (Registry.Variables), so they cannot drift apart. The table is
// shared: read it, never change it.
func IssueVars() []Var { return issueVars }

// CondVars are the variables conditions see: the issue's hooks' outputs,
// its vars, and its own variables, each winning over the ones before (a
// var a person set wins over an output of the same name).
func (i *Issue) CondVars() map[string]any {
	v := make(map[string]any, len(i.Vars)+len(i.Outputs)+10)
	for k, x := range i.Outputs {
		v[k] = x
	}
	for k, x := range i.Vars {
		v[k] = x
	}
	for _, iv := range IssueVars() {
		v[iv.Name] = iv.Value(i)
	}
	return v
}

// MessageVars are the variables message templates see, in the same order
// of precedence as CondVars, as text.
func (i *Issue) MessageVars() map[string]string {
	v := make(map[string]string, len(i.Vars)+len(i.Outputs)+10)
	for k, x := range i.Outputs {
		v[k] = x
	}
	for k, x := range i.Vars {
		v[k] = toString(x)
	}
	for _, iv := range IssueVars() {
		if text, ok := iv.Text(i); ok {
			v[iv.Name] = text
		}
	}
	return v
}

func toString(x any) string {
	switch t := x.(type) {
	case string:
		return t
	case int:
		return strconv.Itoa(t)
	case nil:
		return ""
	case []string:
		return strings.Join(t, ", ")
	}
	return fmt.Sprint(x)
}

// File resolves name, a file an agent writes, inside the issue's directory.
// Hooks and gates read what agents wrote there, and a config or a symlink
// must not make them read anything else: an absolute path, `..` or a
// symlink that leads out is an error saying so. A file that does not exist
// yet resolves to where it would be.
func (i *Issue) File(name string) (string, error) {
	if i.Dir == "" {
		return "", fmt.Errorf("%s: the issue has no directory to read it from", name)
	}
	if filepath.IsAbs(name) {
		return "", fmt.Errorf("%s: absolute paths are not allowed; give the file relative to the issue directory", name)
	}
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("%s: the path leads outside the issue directory; give a file inside it", name)
	}
	path := filepath.Join(i.Dir, name)
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil // the caller reports it missing
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	root, err := filepath.EvalSymlinks(i.Dir)
	if err != nil {
		return "", fmt.Errorf("issue directory %s: %w", i.Dir, err)
	}
	if rel, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s: a symlink leads outside the issue directory (to %s); replace it with the file itself", name, real)
	}
	return real, nil
}

// MaxDocumentBytes bounds a document the host reads: an agent writes it.
const MaxDocumentBytes = 16 << 20

// ReadFile reads name, a file an agent wrote in the issue's directory, as
// File resolves it, but race-free: it is opened beneath the directory
// (os.Root), so a symlink an agent swaps in after File's check cannot lead
// the host's read out of it. A document larger than MaxDocumentBytes is
// refused.
func (i *Issue) ReadFile(name string) ([]byte, error) {
	if _, err := i.File(name); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(i.Dir)
	if err != nil {
		return nil, fmt.Errorf("issue directory %s: %w", i.Dir, err)
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read it: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: is not a regular file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read it: %w", name, err)
	}
	if len(data) > MaxDocumentBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB; a stage document is text for people and agents to read", name, MaxDocumentBytes>>20)
	}
	return data, nil
}
