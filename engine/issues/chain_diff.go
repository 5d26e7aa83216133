package issues

import "github.com/agenttree/agenttree/internal/fielddiff"

// diff says, field by field, how now differs from was. The chain field is
// left out: it is how the change was found, not a change.
func diff(was, now *Issue) []string { return fielddiff.Of(was, now, "chain") }
