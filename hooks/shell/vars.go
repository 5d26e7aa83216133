package shell

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// script makes the configured command runnable: each {{name}} becomes a
// reference to the environment variable that holds its value (envName),
// and env lists those variables with the issue's values, the issue's own
// variables included whether the command names them or not.
//
// A placeholder becomes ${V+"$V"}: the value as exactly one word whether
// the placeholder stands bare, inside double quotes, in $(...) or `...`,
// in ${...} or in a here-document. (A plain "$V" would close and reopen
// double quotes around it and leave the value to word splitting and
// globbing.) The shell expands the reference and never parses the value,
// so nothing in a title is ever code. Two spellings cannot work and are
// refused: inside single quotes the shell expands nothing, so a
// placeholder touching a single quote ('{{issue_title}}', which the
// earlier tool quoted for) would give the variable's name; and a backslash
// before a placeholder would escape the reference's `$`.
func script(command string, issue *hooks.Issue) (text string, env []string, err error) {
	names := map[string]string{} // variable → the placeholder's name
	var problems []error
	text = stages.Expand(command, func(name, prefix string) string {
		rest := command[len(prefix):]
		after := rest[strings.Index(rest, "}}")+len("}}"):]
		v := envName(name)
		if err := check(name, prefix, after); err != nil {
			problems = append(problems, err)
		}
		if other, ok := names[v]; ok && other != name {
			// {{Foo}} and {{foo}}: one of them would get the other's value.
			problems = append(problems, fmt.Errorf("{{%s}} and {{%s}} would both be $%s; rename one of the variables", other, name, v))
		}
		names[v] = name
		return "${" + v + `+"$` + v + `"}`
	})
	if len(problems) > 0 {
		return "", nil, problems[0]
	}
	for _, iv := range hooks.IssueVars() {
		names[envName(iv.Name)] = iv.Name
	}
	vars := issue.MessageVars()
	for v, name := range names {
		env = append(env, v+"="+vars[name])
	}
	sort.Strings(env)
	return text, env, nil
}

// check refuses a placeholder where its reference would not expand.
func check(name, prefix, after string) error {
	if strings.HasSuffix(prefix, "'") || strings.HasPrefix(after, "'") {
		return fmt.Errorf("{{%s}} stands next to a single quote, and inside single quotes the shell expands nothing; "+
			"write the placeholder bare or in double quotes (\"{{%s}}\"), or use $%s", name, name, envName(name))
	}
	if slashes := len(prefix) - len(strings.TrimRight(prefix, `\`)); slashes%2 == 1 {
		return fmt.Errorf("{{%s}} follows a backslash, which would escape it; remove the backslash, or use $%s", name, envName(name))
	}
	return nil
}

// envName is the environment variable a message variable reaches `run`
// commands in: AGENTTREE_ISSUE_TITLE for the issue's own variables,
// AGENTTREE_VAR_COVERAGE for the outputs of earlier hooks and the issue's
// vars, which that way can never pose as one of agenttree's own variables
// (AGENTTREE_ROLE, AGENTTREE_CONFIG, ...).
func envName(name string) string {
	for _, iv := range hooks.IssueVars() {
		if iv.Name == name {
			return "AGENTTREE_" + strings.ToUpper(name)
		}
	}
	return "AGENTTREE_VAR_" + strings.ToUpper(name)
}

// fixedEnv are the variables every `run` command gets.
func fixedEnv(issue *hooks.Issue) []string {
	return []string{
		"AGENTTREE_ISSUE=" + strconv.Itoa(issue.ID),
		"AGENTTREE_STAGE=" + issue.Stage,
		"AGENTTREE_ISSUE_DIR=" + absPath(issue.Dir),
	}
}
