package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenttree/agenttree/stages"
)

// Builtin returns a registry holding every built-in local hook.
func Builtin() *Registry {
	file := stages.Param{Name: "file", Type: stages.ParamString, Required: true}
	section := stages.Param{Name: "section", Type: stages.ParamString}
	onFail := stages.Param{Name: "on_fail", Type: stages.ParamStageRef, Aliases: []string{"on_fail_stage", "on_fail_substage"}}
	to := stages.Param{Name: "to", Type: stages.ParamStageRef, Required: true}

	r := NewRegistry()
	for _, d := range []Def{
		{HookSpec: stages.HookSpec{Name: "file_exists", Main: "file",
			Params: []stages.Param{file}}, Run: fileExists},
		{HookSpec: stages.HookSpec{Name: "section_check",
			Params: []stages.Param{file, {Name: "section", Type: stages.ParamString, Required: true},
				{Name: "expect", Type: stages.ParamEnum, Enum: []string{"empty", "not_empty", "all_checked"}}, onFail}},
			Run: sectionCheck},
		{HookSpec: stages.HookSpec{Name: "has_list_items", Main: "file",
			Params: []stages.Param{file, section, {Name: "min", Type: stages.ParamInt}}}, Run: hasListItems},
		{HookSpec: stages.HookSpec{Name: "checkbox_checked",
			Params: []stages.Param{file, {Name: "item", Type: stages.ParamString, Required: true, Aliases: []string{"checkbox"}}, section, onFail}},
			Run: checkboxChecked},
		{HookSpec: stages.HookSpec{Name: "field_check",
			Params: []stages.Param{file, {Name: "field", Type: stages.ParamString, Required: true, Aliases: []string{"path"}},
				{Name: "min", Type: stages.ParamNumber}, {Name: "max", Type: stages.ParamNumber}}},
			Run: fieldCheck},
		{HookSpec: stages.HookSpec{Name: "min_words", Main: "file",
			Params: []stages.Param{file, {Name: "min", Type: stages.ParamInt, Required: true}, section}}, Run: minWords},
		{HookSpec: stages.HookSpec{Name: "contains",
			Params: []stages.Param{file, {Name: "text", Type: stages.ParamString}, {Name: "values", Type: stages.ParamList}, section},
			OneOf:  [][]string{{"text", "values"}}}, Run: containsText},
		{HookSpec: stages.HookSpec{Name: "title_set"}, Run: titleSet},
		{HookSpec: stages.HookSpec{Name: "has_commits", Outputs: []string{"commit_count"}}, Run: hasCommits},
		{HookSpec: stages.HookSpec{Name: "run", Main: "command",
			Params: []stages.Param{{Name: "command", Type: stages.ParamTemplate, Required: true},
				{Name: "timeout", Type: stages.ParamDuration}, {Name: "outputs", Type: stages.ParamList},
				{Name: "must_pass", Type: stages.ParamBool}},
			Outputs: []string{"exit_status", "output_tail"}, OutputsParam: "outputs"}, Run: runCommand},
		{HookSpec: stages.HookSpec{Name: "step_back", Main: "to",
			Params: []stages.Param{to, {Name: "message", Type: stages.ParamTemplate}}}, Run: stepBack},
		{HookSpec: stages.HookSpec{Name: "rollback", Main: "to",
			Params: []stages.Param{to, {Name: "max_rollbacks", Type: stages.ParamInt}}}, Run: rollback},
		{HookSpec: stages.HookSpec{Name: "create_file",
			Params: []stages.Param{{Name: "dest", Type: stages.ParamString, Required: true},
				{Name: "template", Type: stages.ParamString}, {Name: "content", Type: stages.ParamTemplate}},
			OneOf: [][]string{{"template", "content"}}}, Run: createFile},
	} {
		d.Run = requireParams(d.HookSpec, d.Run)
		r.Register(d)
	}
	for _, d := range prDefs() {
		r.Register(d)
	}
	// The earlier tool's name for the same gate.
	r.Alias("ci_check", "pr_ci_passed")
	return r
}

// requireParams guards a hook against entries that were not built by the
// config loader (which already refuses a missing required parameter), so the
// hooks themselves can take required values for granted.
func requireParams(spec stages.HookSpec, run Func) Func {
	return func(ctx context.Context, c *Call) Outcome {
		for _, p := range spec.Params {
			if !p.Required {
				continue
			}
			if v, ok := c.Params[p.Name]; !ok || v == "" {
				return Failf("hook `%s` needs parameter `%s`; add it to the hook in the config", spec.Name, p.Name)
			}
		}
		for _, group := range spec.OneOf {
			var set []string
			for _, name := range group {
				if _, ok := c.Params[name]; ok {
					set = append(set, "`"+name+"`")
				}
			}
			if len(set) != 1 {
				return Failf("hook `%s` takes exactly one of %s, got %d; fix the hook in the config", spec.Name, quoteNames(group), len(set))
			}
		}
		return run(ctx, c)
	}
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}

// nextHint ends the reasons of failures an agent fixes by editing files.
const nextHint = "then run `agenttree next` again"

// issuePath resolves a file parameter inside the issue directory. Hooks read
// what agents wrote, and a config or a symlink must not make them read
// anything else.
func issuePath(dir, name string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%s: the issue has no directory to read it from", name)
	}
	if filepath.IsAbs(name) {
		return "", fmt.Errorf("%s: absolute paths are not allowed; give the file relative to the issue directory", name)
	}
	clean := filepath.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: the path leads outside the issue directory; give a file inside it", name)
	}
	path := filepath.Join(dir, clean)
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil // the caller reports it missing
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("issue directory %s: %w", dir, err)
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: a symlink leads outside the issue directory (to %s); replace it with the file itself", name, real)
	}
	return real, nil
}

// readDoc reads a markdown file parameter.
func readDoc(c *Call, name string) ([]mdLine, error) {
	path, err := issuePath(c.Issue.Dir, name)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(c, name, path); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read it: %w", name, err)
	}
	return parseMarkdown(string(data)), nil
}

// checkRegular fails unless path is a regular file (after symlinks).
func checkRegular(c *Call, name, path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: not found in the issue directory %s; write it, %s", name, c.Issue.Dir, nextHint)
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	case fi.IsDir():
		return fmt.Errorf("%s: is a directory, not a file; write the document at that path, %s", name, nextHint)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: is not a regular file (%s); write the document at that path, %s", name, fi.Mode().Type(), nextHint)
	}
	return nil
}

// docScope reads a file parameter and narrows it to the section parameter
// when one is given. where names the place for failure reasons:
// `review.md` or `review.md: section "Critical Issues"`.
func docScope(c *Call) (lines []mdLine, where string, err error) {
	file := c.Params.String("file", "")
	lines, err = readDoc(c, file)
	if err != nil {
		return nil, "", err
	}
	name := strings.TrimSpace(c.Params.String("section", ""))
	if name == "" {
		return lines, file, nil
	}
	body, ok := findSection(lines, name)
	if !ok {
		have := "it has no `##` or `###` headings"
		if titles := sectionTitles(lines); len(titles) > 0 {
			have = "its sections are " + quoteList(titles)
		}
		return nil, "", fmt.Errorf("%s: no section %q (%s); add a `## %s` heading with its content, %s", file, name, have, name, nextHint)
	}
	return body, fmt.Sprintf("%s: section %q", file, name), nil
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// checkFailed is a content check that did not hold: problem says what is
// wrong, fix what to do. With `on_fail` set the issue is redirected there
// instead of blocked; problems with the file itself (missing, outside the
// issue directory) never redirect, they block.
func checkFailed(c *Call, problem, fix string) Outcome {
	if to := c.Params.String("on_fail", ""); to != "" {
		return Redirect(to, problem)
	}
	return Failf("%s; %s, %s", problem, fix, nextHint)
}
