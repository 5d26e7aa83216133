package configref

import (
	"slices"

	"github.com/agenttree/agenttree/stages"
)

// Source says who provides a placeholder's value.
type Source string

const (
	SourceIssue      Source = "the issue"
	SourceEngine     Source = "agenttree, after a failure"
	SourceHook       Source = "hooks"
	SourceController Source = "the controller"
)

// Placeholder is a {{name}} a message, a template parameter or a `run`
// command may use.
type Placeholder struct {
	Name   string
	Source Source
	// Hooks are the hooks that provide it as an output.
	Hooks []string
	Doc   string
}

// EngineVars are the variables agenttree adds itself to messages:
// failure_reason (and ci_error, another name for it) in a step back's
// message and a failure policy's hooks, attempt and max_retries in what
// the controller tells an agent after a failure.
var EngineVars = []string{"failure_reason", "ci_error", "attempt", "max_retries"}

// ControllerVars are the variables only the templates the controller fills
// outside a hook may use: tmux.session and notify.command.
var ControllerVars = []string{"project", "role"}

// placeholderDocs says what each variable holds.
var placeholderDocs = map[string]string{
	"issue_id":        "The issue's number.",
	"issue_title":     "The issue's title.",
	"stage":           "The stage the issue is in, as a dot path (`implement.code`).",
	"flow":            "The issue's flow.",
	"branch":          "The issue's branch.",
	"labels":          "The issue's labels, comma-separated.",
	"pr_number":       "The number of the issue's PR (unset until there is one).",
	"pr_url":          "The URL of the issue's PR.",
	"head_sha":        "The commit at the head of the issue's PR.",
	"failure_reason":  "Why the hook failed, in a sentence.",
	"ci_error":        "The same as {{failure_reason}}: why the hook failed (the name the design notes give it).",
	"attempt":         "Which try this is at the failing step (1, 2, ...).",
	"max_retries":     "How many failures of this kind are allowed before a person is called.",
	"ci_passed_sha":   "The commit CI last passed on.",
	"failed_checks":   "The names of the CI checks that failed, comma-separated.",
	"failure_details": "The tail of the failed checks' logs.",
	"ci_url":          "A link to the failed CI run.",
	"conflict_files":  "The files that conflict with the base, comma-separated.",
	"rebased_from":    "The head agenttree's last rebase of the branch started from.",
	"rebased_to":      "The head agenttree's last rebase of the branch pushed.",
	"watch_pr":        "`true` while the controller watches the PR in the background.",
	"watch_interval":  "How often the controller looks at a watched PR.",
	"approved_sha":    "The commit a person approved the PR at.",
	"commit_count":    "How many new commits the issue's branch has.",
	"exit_status":     "The exit status of `run`'s command.",
	"output_tail":     "The last lines of `run`'s output.",
	"project":         "The project's name.",
	"role":            "The role of the stage the issue is in.",
}

// Placeholders lists every variable the hooks of cat and agenttree provide,
// the issue's own first, then agenttree's, then the hooks' outputs, then
// the controller's.
func Placeholders(cat Catalog) []Placeholder {
	var out []Placeholder
	seen := map[string]bool{}
	add := func(name string, src Source) {
		if !seen[name] {
			seen[name] = true
			out = append(out, Placeholder{Name: name, Source: src, Doc: placeholderDocs[name]})
		}
	}
	for _, v := range cat.Variables() {
		add(v, SourceIssue)
	}
	for _, v := range EngineVars {
		add(v, SourceEngine)
	}
	specs := hookSpecs(cat)
	for _, spec := range specs {
		for _, o := range spec.Outputs {
			add(o, SourceHook)
		}
	}
	for _, v := range ControllerVars {
		add(v, SourceController)
	}
	for i := range out {
		out[i].Hooks = providers(specs, out[i].Name)
	}
	return out
}

// providers lists the hooks that declare output name.
func providers(specs []stages.HookSpec, name string) []string {
	var out []string
	for _, spec := range specs {
		if slices.Contains(spec.Outputs, name) {
			out = append(out, spec.Name)
		}
	}
	return out
}
