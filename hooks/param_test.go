package hooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

func TestParamReadsTheConfigElseTheSpecDefault(t *testing.T) {
	expect := hooks.Enum("expect", "what to expect", "empty", "not_empty").Default("not_empty")
	limit := hooks.Int("min", "the least").Default(1)
	wait := hooks.Duration("timeout", "how long")
	tags := hooks.List("labels", "labels")
	tests := []struct {
		name       string
		params     hooks.Params
		wantExpect string
		wantMin    int
		wantWait   time.Duration
		waitSet    bool
		wantTags   []string
	}{
		{name: "nothing given: the spec's defaults", params: hooks.Params{},
			wantExpect: "not_empty", wantMin: 1, wantWait: time.Minute},
		{name: "given", params: hooks.Params{"expect": "empty", "min": 3, "timeout": 5 * time.Second, "labels": []string{"a"}},
			wantExpect: "empty", wantMin: 3, wantWait: 5 * time.Second, waitSet: true, wantTags: []string{"a"}},
		{name: "zero values given are kept", params: hooks.Params{"min": 0, "timeout": time.Duration(0)},
			wantExpect: "not_empty", wantMin: 0, wantWait: 0, waitSet: true},
		{name: "a value of another type is not the parameter", params: hooks.Params{"min": "3"},
			wantExpect: "not_empty", wantMin: 1, wantWait: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &hooks.Call{Params: tt.params}
			assert.Equal(t, tt.wantExpect, expect.Get(c))
			assert.Equal(t, tt.wantMin, limit.Get(c))
			assert.Equal(t, tt.wantWait, wait.Or(c, time.Minute), "Or falls back to the setting")
			_, set := wait.Lookup(c)
			assert.Equal(t, tt.waitSet, set)
			assert.Equal(t, tt.wantTags, tags.Get(c))
		})
	}
}

func TestParamSpecs(t *testing.T) {
	to := hooks.StageRef("to", "where to go", stages.MoveRollback).Required()
	onFail := hooks.StageRef("on_fail", "where to redirect", stages.MoveRedirect).Aliases("on_fail_stage")
	must := hooks.Bool("must_pass", "fail or warn").Default(true)
	specs := hooks.Specs(to, onFail, must)
	require.Len(t, specs, 3)
	assert.Equal(t, stages.Param{Name: "to", Type: stages.ParamStageRef, Required: true, Doc: "where to go", Move: stages.MoveRollback}, specs[0])
	assert.Equal(t, []string{"on_fail_stage"}, specs[1].Aliases)
	assert.Equal(t, stages.MoveRedirect, specs[1].MoveKind())
	assert.Equal(t, true, specs[2].Default)
	assert.Equal(t, stages.ParamBool, specs[2].Type)

	spec := stages.HookSpec{Name: "h", Params: specs}
	assert.True(t, spec.Moves(stages.MoveRollback))
	assert.True(t, spec.Moves(stages.MoveRedirect))
	assert.False(t, spec.Moves(stages.MoveStepBack))
}

// The registry guards every hook against entries the loader would have
// refused, so hooks can take their required parameters for granted.
func TestRegistryGuardsParameters(t *testing.T) {
	file := hooks.String("file", "the file").Required()
	text := hooks.String("text", "one spelling")
	values := hooks.List("values", "the other")
	ran := 0
	r := hooks.NewRegistry(hooks.Def{
		HookSpec: stages.HookSpec{Name: "h", Params: hooks.Specs(file, text, values), OneOf: [][]string{{"text", "values"}}},
		Run:      func(context.Context, *hooks.Call) hooks.Outcome { ran++; return hooks.Pass() },
	})
	tests := []struct {
		name   string
		params map[string]any
		reason string
	}{
		{"required missing", map[string]any{"text": "x"}, "hook `h` needs parameter `file`"},
		{"required empty", map[string]any{"file": "", "text": "x"}, "hook `h` needs parameter `file`"},
		{"none of a group", map[string]any{"file": "f"}, "hook `h` takes exactly one of `text`, `values`, got 0"},
		{"both of a group", map[string]any{"file": "f", "text": "x", "values": []string{"y"}}, "got 2"},
		{"fine", map[string]any{"file": "f", "values": []string{"y"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := ran
			o := r.Run(context.Background(), &stages.HookEntry{Name: "h", Params: tt.params}, &hooks.Issue{}, nil)
			if tt.reason == "" {
				assert.Equal(t, hooks.KindPass, o.Kind, o.Reason)
				assert.Equal(t, before+1, ran)
				return
			}
			assert.Equal(t, hooks.KindFail, o.Kind)
			assert.Contains(t, o.Reason, tt.reason)
			assert.Equal(t, before, ran, "the hook did not run")
		})
	}
}
