package shell

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/shell/internal/placement"
	"github.com/agenttree/agenttree/stages"
)

// Script makes a configured command runnable: each {{name}} becomes a
// reference to the environment variable that holds its value (envName),
// and env lists those variables with the issue's values, the issue's own
// variables included whether the command names them or not, with the
// variables every command gets (fixedEnv).
//
// A placeholder becomes ${V+"$V"}: the value as exactly one word whether
// the placeholder stands bare, inside double quotes, in $(...) or `...`,
// in ${...} or in a here-document. (A plain "$V" would close and reopen
// double quotes around it and leave the value to word splitting and
// globbing.) The shell expands the reference and never parses the value,
// so nothing in a title is ever code. Where the reference would not
// expand, or the shell would read the value as code or a name after all,
// the command is refused (checkCommand).
func Script(command string, issue *hooks.Issue) (text string, env []string, err error) {
	if problems := checkCommand(command); len(problems) > 0 {
		return "", nil, errors.Join(problems...)
	}
	names := map[string]string{} // variable → the placeholder's name
	text = stages.Expand(command, func(name string, _, _ int) string {
		v := envName(name)
		names[v] = name
		return "${" + v + `+"$` + v + `"}`
	})
	for _, iv := range hooks.IssueVars() {
		names[envName(iv.Name)] = iv.Name
	}
	vars := issue.MessageVars()
	for v, name := range names {
		env = append(env, v+"="+vars[name])
	}
	env = append(env, fixedEnv(issue)...)
	sort.Strings(env)
	return text, env, nil
}

// checkParams is run's check of its parameters when the config is
// loaded: its command's placeholders, each problem an error of its own.
func checkParams(params map[string]any) error {
	command, ok := params[commandParam.Name()].(string)
	if !ok {
		return nil // missing or not a string: the loader said so
	}
	var errs []error
	for _, problem := range checkCommand(command) {
		errs = append(errs, fmt.Errorf("parameter `%s`: %w", commandParam.Name(), problem))
	}
	return errors.Join(errs...)
}

// checkCommand lists what is wrong with a command's placeholders: two
// that would share a variable, or each that stands where its reference
// would not expand or where the shell would read the value as code or as
// a name (placement.Check).
func checkCommand(command string) []error {
	seen := map[string]string{} // variable → the placeholder's name
	for _, name := range stages.Placeholders(command) {
		v := envName(name)
		if other, ok := seen[v]; ok && other != name {
			// {{Foo}} and {{foo}}: one of them would get the other's value.
			return []error{fmt.Errorf("{{%s}} and {{%s}} would both be $%s; rename one of the variables", other, name, v)}
		}
		seen[v] = name
	}
	return placement.Check(command, envName)
}

// envName is the environment variable a message variable reaches `run`
// commands in: AGENTTREE_ISSUE_TITLE for the issue's own variables,
// AGENTTREE_VAR_COVERAGE for the outputs of earlier hooks and the issue's
// vars, which that way can never pose as one of agenttree's own variables
// (AGENTTREE_ROLE, AGENTTREE_CONFIG, ...).
func envName(name string) string {
	if slices.ContainsFunc(hooks.IssueVars(), func(iv hooks.Var) bool { return iv.Name == name }) {
		return "AGENTTREE_" + strings.ToUpper(name)
	}
	return "AGENTTREE_VAR_" + strings.ToUpper(name)
}

// fixedEnv are the variables every command gets.
func fixedEnv(issue *hooks.Issue) []string {
	return []string{
		"AGENTTREE_ISSUE=" + strconv.Itoa(issue.ID),
		"AGENTTREE_STAGE=" + issue.Stage,
		"AGENTTREE_ISSUE_DIR=" + absPath(issue.Dir),
	}
}
