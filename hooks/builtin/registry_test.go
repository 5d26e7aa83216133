package builtin

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

func TestBuiltinSpecs(t *testing.T) {
	r := Registry()
	assert.Equal(t, []string{"check_conflicts", "checkbox_checked", "close_pr", "contains", "create_file", "create_pr", "field_check",
		"file_exists", "has_commits", "has_list_items", "merge_pr", "min_words", "poll_pr_status", "pr_approved", "pr_ci_passed",
		"pr_mergeable", "push_branch", "rebase", "rollback", "run", "section_check", "send_message", "step_back", "title_set", "wait_for_ci"}, r.HookNames())
	alias, ok := r.Hook("ci_check")
	require.True(t, ok, "the earlier tool's ci_check loads")
	assert.Equal(t, "pr_ci_passed", alias.Name)
	mains := map[string]string{"file_exists": "file", "has_list_items": "file", "min_words": "file", "run": "command",
		"step_back": "to", "rollback": "to", "send_message": "text"}
	for _, name := range r.HookNames() {
		spec, ok := r.Hook(name)
		require.True(t, ok)
		assert.Equal(t, mains[name], spec.Main, name)
		if spec.Main != "" {
			p, ok := spec.Param(spec.Main)
			assert.True(t, ok && p.Required, "%s: main parameter %s must be a required parameter", name, spec.Main)
		}
	}
	for _, name := range []string{"section_check", "checkbox_checked"} {
		spec, _ := r.Hook(name)
		for _, alias := range []string{"on_fail", "on_fail_stage", "on_fail_substage"} {
			p, ok := spec.Param(alias)
			assert.True(t, ok, "%s %s", name, alias)
			assert.Equal(t, "on_fail", p.Name)
			assert.Equal(t, stages.ParamStageRef, p.Type)
		}
	}
}

// The engine finds the hooks that move issues, approve, wait, resolve
// failures, find conflicts and watch PRs by what their specs declare,
// never by their names.
func TestBuiltinTraits(t *testing.T) {
	r := Registry()
	moves := map[string][]stages.Move{}
	var approval, waits, resolves, conflicts, watches []string
	for _, name := range r.HookNames() {
		spec, _ := r.Hook(name)
		for _, m := range []stages.Move{stages.MoveRedirect, stages.MoveStepBack, stages.MoveRollback} {
			if spec.Moves(m) {
				moves[name] = append(moves[name], m)
			}
		}
		if spec.Approval {
			approval = append(approval, name)
		}
		if spec.Waits {
			waits = append(waits, name)
		}
		if spec.Resolves {
			resolves = append(resolves, name)
		}
		if spec.Conflicts {
			conflicts = append(conflicts, name)
		}
		if spec.Watches {
			watches = append(watches, name)
		}
	}
	assert.Equal(t, map[string][]stages.Move{
		"section_check":    {stages.MoveRedirect},
		"checkbox_checked": {stages.MoveRedirect},
		"step_back":        {stages.MoveStepBack},
		"rollback":         {stages.MoveRollback},
	}, moves)
	assert.Equal(t, []string{"pr_approved"}, approval)
	assert.Equal(t, []string{"wait_for_ci"}, waits)
	assert.Equal(t, []string{"rebase"}, resolves)
	assert.Equal(t, []string{"check_conflicts", "merge_pr", "pr_mergeable"}, conflicts)
	assert.Equal(t, []string{"poll_pr_status"}, watches)
}

// Every parameter says what it does, and its default is a value the
// loader could have stored for it.
func TestBuiltinParamDocsAndDefaults(t *testing.T) {
	r := Registry()
	goType := map[stages.ParamType]string{
		stages.ParamString: "string", stages.ParamTemplate: "string", stages.ParamEnum: "string", stages.ParamStageRef: "string",
		stages.ParamInt: "int", stages.ParamNumber: "float64", stages.ParamBool: "bool",
		stages.ParamDuration: fmt.Sprintf("%T", time.Duration(0)), stages.ParamList: "[]string",
	}
	for _, name := range r.HookNames() {
		spec, _ := r.Hook(name)
		for _, p := range spec.Params {
			where := name + "." + p.Name
			assert.NotEmpty(t, p.Doc, "%s has no Doc", where)
			if p.Default == nil {
				continue
			}
			assert.False(t, p.Required, "%s is required and has a default", where)
			assert.Equal(t, goType[p.Type], fmt.Sprintf("%T", p.Default), "%s: the default's type", where)
			if p.Type == stages.ParamEnum {
				assert.True(t, slices.Contains(p.Enum, p.Default.(string)), "%s: default %v is not one of %v", where, p.Default, p.Enum)
			}
		}
		for _, group := range spec.OneOf {
			for _, alt := range group {
				p, _ := spec.Param(alt)
				assert.Nil(t, p.Default, "%s.%s is one of a group and cannot have a default", name, alt)
			}
		}
	}
}
