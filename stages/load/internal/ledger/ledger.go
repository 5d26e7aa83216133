// Package ledger collects, while a config's stages are read, what can only
// be checked once every stage is known: the stage references hooks and
// on_failure make, the message templates, and the variables hooks provide
// to them.
package ledger

import (
	"maps"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
)

// Ledger is what a config's readers leave to be checked at the end.
type Ledger struct {
	// Refs are the stage references, in the order they were read.
	Refs      []*Ref
	templates []template
	outputs   map[string]bool
	// hookOutputs are the outputs the config's hooks give: values worked
	// out from what agents write.
	hookOutputs map[string]bool
}

// Owner is the stage, or substage, whose keys are being read.
type Owner struct {
	Stage *stages.Stage
	Sub   *stages.Substage // nil for a stage's own keys, which apply in all its substages
}

// Where names the owner in messages.
func (o Owner) Where() string {
	if o.Sub != nil {
		return "substage " + o.Stage.Name + "." + o.Sub.Name
	}
	return "stage " + o.Stage.Name
}

// Ref is a stage reference in a hook or on_failure.
type Ref struct {
	Pos  stages.Pos
	From Owner
	Ref  string
	// Set writes the resolved node path back where the reference was read.
	Set func(path string)
	// What names the reference in errors: `section_check.on_fail`.
	What string
	// Verb says what sends the issue there: "on_fail" in "whose on_fail
	// sends issues to".
	Verb string
	// Move is how the issue is sent there: a step back and a rollback
	// go to an earlier stage, a redirect may not skip a gate.
	Move stages.Move
	// Target is the resolved node path; empty when Ref did not resolve.
	Target string
}

type template struct {
	pos  stages.Pos
	text string
	what string
	// extra are variables this template may use beside every message's.
	extra []string
}

// engineVars are the message variables agenttree adds itself, beside
// every issue's own (the catalog's) and the outputs of the config's hooks:
//   - failure_reason: the engine's, in the message of a step back (the
//     failing hook's reason); ci_error is another name for it;
//   - attempt, max_retries: the host controller's, in the messages it sends
//     an agent after a failure (the how-many-th try, of the config's
//     max_retries).
var engineVars = []string{"failure_reason", "ci_error", "attempt", "max_retries"}

// New returns a ledger that knows the variables every message may use:
// the issue's own (the catalog's) and the engine's.
func New(cat stages.HookCatalog) *Ledger {
	l := &Ledger{outputs: map[string]bool{}}
	l.Provide(cat.Variables()...)
	l.Provide(engineVars...)
	return l
}

// Refer records a stage reference, resolved once every stage is read.
func (l *Ledger) Refer(r *Ref) { l.Refs = append(l.Refs, r) }

// Template records a message template written at pos, named what in
// errors, which may use extra beside the variables every message may use.
func (l *Ledger) Template(pos stages.Pos, text, what string, extra ...string) {
	l.templates = append(l.templates, template{pos: pos, text: text, what: what, extra: extra})
}

// Output records the outputs a hook of the config gives, which later
// messages may use.
func (l *Ledger) Output(names ...string) {
	l.Provide(names...)
	if l.hookOutputs == nil {
		l.hookOutputs = map[string]bool{}
	}
	for _, n := range names {
		l.hookOutputs[n] = true
	}
}

// IsHookOutput reports whether a hook of the config gives name.
func (l *Ledger) IsHookOutput(name string) bool { return l.hookOutputs[name] }

// Provide records variables a hook of the config provides to messages.
func (l *Ledger) Provide(names ...string) {
	for _, n := range names {
		l.outputs[n] = true
	}
}

// CheckTemplates reports each placeholder of a template that names no
// variable the template may use.
func (l *Ledger) CheckTemplates(d *diag.Collector) {
	for _, t := range l.templates {
		for _, name := range stages.Placeholders(t.text) {
			if l.outputs[name] || slices.Contains(t.extra, name) {
				continue
			}
			known := slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(l.outputs)), t.extra...)))
			hint := diag.Suggest(name, known)
			if hint == "" {
				hint = "known variables: " + strings.Join(known, ", ")
			}
			d.Errorf(t.pos, hint, "%s uses {{%s}}, which no hook or issue provides", t.what, name)
		}
	}
}
