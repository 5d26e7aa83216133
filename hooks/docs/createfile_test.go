package docs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
	"github.com/agenttree/agenttree/stages"
)

func TestCreateFile(t *testing.T) {
	tests := []struct {
		name      string
		templates map[string]string // files under the config directory
		existing  map[string]string // files already in the issue directory
		params    hooks.Params
		noConfig  bool
		kind      hooks.Kind
		files     map[string]string
		reason    []string
	}{
		{name: "from _agenttree/templates first",
			templates: map[string]string{
				"_agenttree/templates/research.md": "# Research for #{{issue_id}}: {{issue_title}}\n",
				"templates/research.md":            "second choice\n",
				"research.md":                      "third choice\n",
			},
			params: hooks.Params{"template": "research.md", "dest": "research.md"},
			kind:   hooks.KindPass, files: map[string]string{"research.md": "# Research for #7: Add login\n"}},
		{name: "then templates/",
			templates: map[string]string{"templates/research.md": "second choice\n", "research.md": "third choice\n"},
			params:    hooks.Params{"template": "research.md", "dest": "notes.md"},
			kind:      hooks.KindPass, files: map[string]string{"notes.md": "second choice\n"}},
		{name: "then relative to the config directory",
			templates: map[string]string{"docs/research.md": "stage {{stage}}{{unknown}}\n"},
			params:    hooks.Params{"template": "docs/research.md", "dest": "research.md"},
			kind:      hooks.KindPass, files: map[string]string{"research.md": "stage implement.feedback\n"}},
		{name: "inline content", params: hooks.Params{"content": "## Plan for {{issue_title}}\n", "dest": "plan.md"},
			kind: hooks.KindPass, files: map[string]string{"plan.md": "## Plan for Add login\n"}},
		{name: "inline content needs no config", noConfig: true, params: hooks.Params{"content": "x", "dest": "plan.md"},
			kind: hooks.KindPass, files: map[string]string{"plan.md": "x"}},
		{name: "existing file is kept", templates: map[string]string{"templates/plan.md": "fresh\n"},
			existing: map[string]string{"plan.md": "the agent's edits\n"},
			params:   hooks.Params{"template": "plan.md", "dest": "plan.md"}, kind: hooks.KindPass},
		{name: "existing directory", existing: map[string]string{"plan.md/x": ""},
			params: hooks.Params{"content": "x", "dest": "plan.md"}, kind: hooks.KindFail, reason: []string{"plan.md is a directory"}},
		{name: "template not found", params: hooks.Params{"template": "missing.md", "dest": "plan.md"}, kind: hooks.KindFail,
			reason: []string{"template missing.md not found (looked for ", filepath.Join("_agenttree", "templates", "missing.md"), "create it"}},
		{name: "no config to find templates by", noConfig: true, params: hooks.Params{"template": "plan.md", "dest": "plan.md"},
			kind: hooks.KindFail, reason: []string{"no config file is known", "`content:`"}},
		{name: "template outside the config directory", params: hooks.Params{"template": "../secret.md", "dest": "plan.md"},
			kind: hooks.KindFail, reason: []string{`template "../secret.md" must be a path relative to the config directory`}},
		{name: "dest with a directory", params: hooks.Params{"content": "x", "dest": "docs/plan.md"}, kind: hooks.KindFail,
			reason: []string{`dest "docs/plan.md" must be a plain file name`}},
		{name: "dest leading up", params: hooks.Params{"content": "x", "dest": ".."}, kind: hooks.KindFail,
			reason: []string{`dest ".." must be a plain file name`}},
		{name: "dest missing", params: hooks.Params{"content": "x"}, kind: hooks.KindFail, reason: []string{"needs parameter `dest`"}},
		{name: "template and content both", params: hooks.Params{"content": "x", "template": "t.md", "dest": "p.md"}, kind: hooks.KindFail,
			reason: []string{"takes exactly one of `template`, `content`, got 2"}},
		{name: "neither template nor content", params: hooks.Params{"dest": "p.md"}, kind: hooks.KindFail,
			reason: []string{"takes exactly one of `template`, `content`, got 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			hookstest.WriteFiles(t, root, tt.templates)
			issue := hookstest.NewIssue(t)
			hookstest.WriteFiles(t, issue.Dir, tt.existing)
			env := &hooks.Env{Config: &stages.Config{File: filepath.Join(root, stages.FileName)}}
			if tt.noConfig {
				env = nil
			}
			o := hookstest.Call(t, registry(), "create_file", issue, tt.params, env)
			assert.Equal(t, tt.kind, o.Kind, o.Reason)
			assert.Equal(t, tt.files, o.Files)
			for _, r := range tt.reason {
				assert.Contains(t, o.Reason, r)
			}
			for name, content := range tt.existing {
				got, err := os.ReadFile(filepath.Join(issue.Dir, name))
				if err == nil {
					assert.Equal(t, content, string(got), "the hook writes nothing itself")
				}
			}
		})
	}
}

func TestCreateFileLoads(t *testing.T) {
	tests := []struct {
		name    string
		hook    string
		want    string // "" when it loads
		content string // the content parameter it loads with, if any
	}{
		{"template", `create_file: {template: research.md, dest: research.md}`, "", ""},
		{"content with a placeholder", `create_file: {content: "# {{issue_title}}", dest: plan.md}`, "", "# {{issue_title}}"},
		{"both", `create_file: {template: a.md, content: b, dest: plan.md}`, "hook `create_file` takes `template` or `content`, not both", ""},
		{"neither", `create_file: {dest: plan.md}`, "hook `create_file` needs `template` or `content`", ""},
		{"no dest", `create_file: {template: a.md}`, "hook `create_file` needs parameter `dest`", ""},
		{"unknown placeholder in content", `create_file: {content: "{{isue_title}}", dest: p.md}`, "create_file.content uses {{isue_title}}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _, err := hookstest.LoadEntry(registry(), "post_start", tt.hook)
			if tt.want != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "create_file", h.Name)
			if tt.content != "" {
				assert.Equal(t, tt.content, h.Params["content"])
			}
		})
	}
}
