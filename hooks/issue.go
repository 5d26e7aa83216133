package hooks

import (
	"fmt"
	"strconv"
	"strings"
	"time"
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
	From, To, Kind, Actor, Reason string
	At                            time.Time
}

// CondVars are the variables conditions see: the issue's fields, its vars
// and its hooks' outputs. Vars a person set win over outputs of the same
// name, here and in MessageVars.
func (i *Issue) CondVars() map[string]any {
	v := make(map[string]any, len(i.Vars)+len(i.Outputs)+8)
	for k, x := range i.Outputs {
		v[k] = x
	}
	for k, x := range i.Vars {
		v[k] = x
	}
	v["issue_id"] = i.ID
	v["issue_title"] = i.Title
	v["stage"] = i.Stage
	v["flow"] = i.Flow
	v["branch"] = i.Branch
	v["labels"] = i.Labels
	v["pr_number"] = i.PRNumber
	return v
}

// MessageVars are the variables message templates see.
func (i *Issue) MessageVars() map[string]string {
	v := make(map[string]string, len(i.Outputs)+12)
	for k, x := range i.Outputs {
		v[k] = x
	}
	for k, x := range i.Vars {
		v[k] = toString(x)
	}
	v["issue_id"] = strconv.Itoa(i.ID)
	v["issue_title"] = i.Title
	v["stage"] = i.Stage
	v["flow"] = i.Flow
	v["branch"] = i.Branch
	v["head_sha"] = i.HeadSHA
	v["pr_url"] = i.PRURL
	if i.PRNumber > 0 {
		v["pr_number"] = strconv.Itoa(i.PRNumber)
	}
	return v
}

func toString(x any) string {
	switch t := x.(type) {
	case string:
		return t
	case nil:
		return ""
	case []string:
		return strings.Join(t, ", ")
	}
	return fmt.Sprint(x)
}
