package fielddiff_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/internal/fielddiff"
)

type pending struct {
	Stage string `json:"stage"`
}

type record struct {
	Stage   string            `json:"stage"`
	Version int               `json:"version"`
	Pending *pending          `json:"pending,omitempty"`
	Vars    map[string]string `json:"vars,omitempty"`
	History []string          `json:"history"`
	Chain   string            `json:"chain,omitempty"`
}

func TestOf(t *testing.T) {
	was := &record{Stage: "implement.code", Version: 3, Vars: map[string]string{"a": "1"}, History: []string{"x"}, Chain: "h1"}
	for _, tt := range []struct {
		name string
		now  record
		want []string
	}{
		{"same, but the skipped field", record{Stage: "implement.code", Version: 3, Vars: map[string]string{"a": "1"}, History: []string{"x"}, Chain: "h2"}, nil},
		{"fields in declaration order", record{Stage: "accepted", Version: 9, Pending: &pending{Stage: "accepted"}, Vars: map[string]string{"a": "1"}, History: []string{"x", "y"}},
			[]string{"stage: implement.code → accepted", "version: 3 → 9", "pending added", "history: 1 → 2 entries"}},
		{"nested maps by key", record{Stage: "implement.code", Version: 3, Vars: map[string]string{"a": "2", "b": ""}, History: []string{"x"}},
			[]string{"vars.a: 1 → 2", "vars.b added"}},
		{"terminal controls never shown", record{Stage: "\x1b]0;pwned\x07accepted", Version: 3, Vars: map[string]string{"a": "1"}, History: []string{"x"}},
			[]string{"stage: implement.code → accepted"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, fielddiff.Of(was, &tt.now, "chain"))
		})
	}
}

func TestMaps(t *testing.T) {
	was := map[string]any{"state": "failure", "attempt": 1.0, "approvals": []any{map[string]any{"by": "alice"}}}
	for _, tt := range []struct {
		name string
		now  map[string]any
		want []string
	}{
		{"same", map[string]any{"state": "failure", "attempt": 1.0, "approvals": []any{map[string]any{"by": "alice"}}}, nil},
		{"members by name", map[string]any{"state": "success", "attempt": 2.0, "approvals": []any{map[string]any{"by": "alice"}, map[string]any{"by": "bob"}}, "note": "x"},
			[]string{"approvals: 1 → 2 entries", "attempt: 1 → 2", "note added", "state: failure → success"}},
		{"removed", map[string]any{"state": "failure", "attempt": 1.0}, []string{"approvals removed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, fielddiff.Maps(was, tt.now))
		})
	}
}
