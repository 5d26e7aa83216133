package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/configcmd"
	"github.com/agenttree/agenttree/docs/skills"
	"github.com/agenttree/agenttree/examples"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/stages"
)

// gitRepo is a fresh git repository, with no commit yet.
func gitRepo(t *testing.T) string {
	t.Helper()
	gittest.Require(t)
	dir := filepath.Join(t.TempDir(), "shop")
	require.NoError(t, os.Mkdir(dir, 0o755))
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	return dir
}

// tree lists the files under dir (relative, slash-separated), .git left out.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	}))
	return files
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

var starterFiles = []string{
	".agenttree.yaml", ".gitignore",
	"_agenttree/skills/backlog.md", "_agenttree/skills/ci-failure.md", "_agenttree/skills/implement-code.md",
	"_agenttree/skills/implement-feedback.md", "_agenttree/skills/implementation-review.md",
	"_agenttree/skills/ci-stalled.md", "_agenttree/skills/merge-conflict.md", "_agenttree/skills/pr-ready.md",
}

func TestInitInAFreshRepository(t *testing.T) {
	dir := gitRepo(t)
	config := filepath.Join(dir, stages.FileName)

	r := invokeIn(t, dir, humanEnv, "init")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.ElementsMatch(t, starterFiles, tree(t, dir))
	for _, want := range []string{config, "the reference pipeline", "implement.feedback → pr_ready → implementation_review → accepted",
		"_agenttree/skills/", "added to .gitignore", "next:", "agenttree issue create"} {
		assert.Contains(t, r.stdout, want)
	}

	text := read(t, config)
	assert.True(t, strings.HasPrefix(text, configcmd.SchemaLine), "the first line is the schema comment: %q", text[:80])
	assert.Contains(t, text, "project: shop\n", "named after the directory")
	for _, name := range []string{"backlog.md", "implement-code.md", "ci-failure.md"} {
		want, err := skills.Read(name)
		require.NoError(t, err)
		assert.Equal(t, string(want), read(t, filepath.Join(dir, "_agenttree", "skills", name)))
	}

	r = invoke(t, humanEnv, "--config", config, "validate", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var rep validateJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.True(t, rep.Valid)
	assert.Empty(t, rep.Errors)
	assert.Empty(t, rep.Warnings, "the starter names only skill files it wrote")

	// What git sees: the instructions, not the state.
	gitignore := read(t, filepath.Join(dir, ".gitignore"))
	assert.Contains(t, gitignore, "/_agenttree/*\n!/_agenttree/skills/\n")
	r = invoke(t, humanEnv, "--config", config, "issue", "create", "My first issue")
	require.Equal(t, exitOK, r.code, r.stderr)
	status := gittest.Run(t, dir, "status", "--porcelain", "--untracked-files=all")
	assert.Contains(t, status, "?? _agenttree/skills/implement-code.md")
	assert.NotContains(t, status, "_agenttree/host", "issue state is ignored")
	assert.NotContains(t, status, "_agenttree/issues", "issue documents are ignored")

	// The stages' instructions are the files init wrote, and a team's edit
	// is what agents are told.
	edited := "# implement.code\n\nOur own way of working.\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "_agenttree", "skills", "implement-code.md"), []byte(edited), 0o644))
	r = invoke(t, humanEnv, "--config", config, "next", "-i", "1")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Our own way of working.")
}

func TestInitRefusesAnExistingConfig(t *testing.T) {
	dir := gitRepo(t)
	config := filepath.Join(dir, stages.FileName)
	custom := "stages:\n  - name: mine\n  - name: done\n    terminal: completion\n"
	require.NoError(t, os.WriteFile(config, []byte(custom), 0o644))

	for _, args := range [][]string{{"init"}, {"init", "--template", "quick"}} {
		r := invokeIn(t, dir, humanEnv, args...)
		assert.Equal(t, exitUsage, r.code)
		assert.Contains(t, r.stderr, config+" already exists")
		assert.Contains(t, r.stderr, "--force")
		assert.Equal(t, custom, read(t, config), "the config is untouched")
		assert.Equal(t, []string{stages.FileName}, tree(t, dir), "nothing else is written either")
	}
}

func TestInitOutsideARepository(t *testing.T) {
	gittest.Require(t)
	dir := t.TempDir()
	r := invokeIn(t, dir, humanEnv, "init")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, dir+" is not in a git work tree")
	assert.Contains(t, r.stderr, "run `git init` there first")
	assert.Empty(t, tree(t, dir), "nothing is written")

	r = invokeIn(t, dir, humanEnv, "init", "missing")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, filepath.Join(dir, "missing")+" is not a directory")
	assert.NoDirExists(t, filepath.Join(dir, "missing"))
}

func TestInitTemplates(t *testing.T) {
	for _, name := range examples.Names() {
		t.Run(name, func(t *testing.T) {
			dir := gitRepo(t)
			r := invokeIn(t, dir, humanEnv, "init", "--template", name)
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, r.stdout, "the "+name+" example")
			want, err := examples.Config(name)
			require.NoError(t, err)
			want = regexp.MustCompile(`(?m)^project: .*$`).ReplaceAll(want, []byte("project: shop"))
			assert.Equal(t, string(want), read(t, filepath.Join(dir, stages.FileName)), "the example, as it is, named after the repository")
			assert.ElementsMatch(t, []string{".agenttree.yaml", ".gitignore", "_agenttree/skills/ci-failure.md", "_agenttree/skills/ci-stalled.md", "_agenttree/skills/merge-conflict.md"}, tree(t, dir))
			r = invoke(t, humanEnv, "--config", filepath.Join(dir, stages.FileName), "validate")
			assert.Equal(t, exitOK, r.code, r.stderr)
		})
	}

	dir := gitRepo(t)
	r := invokeIn(t, dir, humanEnv, "init", "--template", "kanban")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `unknown example "kanban"`)
	assert.Contains(t, r.stderr, strings.Join(examples.Names(), ", "), "the error lists the examples")
	assert.Empty(t, tree(t, dir))
}

func TestInitTwice(t *testing.T) {
	dir := gitRepo(t)
	require.Equal(t, exitOK, invokeIn(t, dir, humanEnv, "init").code)
	starter := read(t, filepath.Join(dir, stages.FileName))
	gitignore := read(t, filepath.Join(dir, ".gitignore"))
	own := filepath.Join(dir, "_agenttree", "skills", "pr-ready.md")
	require.NoError(t, os.WriteFile(own, []byte("our own\n"), 0o644))
	config := filepath.Join(dir, stages.FileName)
	require.Equal(t, exitOK, invoke(t, humanEnv, "--config", config, "issue", "create", "My first issue").code)
	state := filepath.Join(statedir.Layout{Root: filepath.Join(dir, "_agenttree")}.Issue(1), "issue.yaml")
	require.FileExists(t, state)

	r := invokeIn(t, dir, humanEnv, "init")
	assert.Equal(t, exitUsage, r.code, "a second init is refused")
	assert.Contains(t, r.stderr, "already exists")

	r = invokeIn(t, dir, humanEnv, "init", "--force", "--template", "quick")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotEqual(t, starter, read(t, filepath.Join(dir, stages.FileName)), "--force replaces the config")
	assert.Contains(t, r.stdout, "kept _agenttree/skills/: ci-failure.md, ci-stalled.md, merge-conflict.md")
	assert.Contains(t, r.stdout, ".gitignore already keeps")
	assert.Equal(t, gitignore, read(t, filepath.Join(dir, ".gitignore")), "no line twice")

	r = invokeIn(t, dir, humanEnv, "init", "--force")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, starter, read(t, filepath.Join(dir, stages.FileName)))
	assert.Equal(t, "our own\n", read(t, own), "instructions a team edited are kept")
	assert.FileExists(t, state, "init leaves the issues alone")
}

func TestInitGitignore(t *testing.T) {
	tests := []struct {
		name, before, after string
		note                bool
	}{
		{name: "lines of its own are kept", before: "node_modules/\n*.log",
			after: "node_modules/\n*.log\n\n" + configcmd.IgnoreComment + "/_agenttree/*\n!/_agenttree/skills/\n"},
		{name: "a line already there is not added again", before: "/_agenttree/*\n",
			after: "/_agenttree/*\n\n" + configcmd.IgnoreComment + "!/_agenttree/skills/\n"},
		{name: "all of _agenttree/ ignored: said, left alone", before: "_agenttree/\n",
			after: "_agenttree/\n\n" + configcmd.IgnoreComment + "/_agenttree/*\n!/_agenttree/skills/\n", note: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := gitRepo(t)
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(tt.before), 0o644))
			r := invokeIn(t, dir, humanEnv, "init")
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Equal(t, tt.after, read(t, filepath.Join(dir, ".gitignore")))
			if tt.note {
				assert.Contains(t, r.stdout, `note: .gitignore's line "_agenttree/" ignores all of _agenttree/`)
			} else {
				assert.NotContains(t, r.stdout, "note:")
			}
		})
	}
}

// A write that fails half way takes back what was written.
func TestInitWritesAllOrNothing(t *testing.T) {
	dir := gitRepo(t)
	// A file where the instructions' directory goes: making it fails
	// after .gitignore is written.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "_agenttree"), []byte("in the way\n"), 0o644))
	r := invokeIn(t, dir, humanEnv, "init")
	assert.NotEqual(t, exitOK, r.code)
	assert.Contains(t, r.stderr, filepath.Join(dir, "_agenttree", "skills"))
	assert.Equal(t, []string{"_agenttree"}, tree(t, dir), "no .gitignore, no config")
}

// init fills in the repository's name and the branch its pull requests
// merge into, in the starter and in an example alike.
func TestInitReadsTheRepository(t *testing.T) {
	gittest.Require(t)
	fresh := func(t *testing.T, name, branch string) string {
		dir := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.Mkdir(dir, 0o755))
		gittest.Run(t, dir, "init", "-q", "-b", branch)
		return dir
	}
	cloned := func(t *testing.T) string {
		bare, _ := gittest.NewRemote(t)
		src := fresh(t, "src", "develop")
		gittest.Commit(t, src, "README.md", "hi\n", "first")
		gittest.Run(t, src, "push", "-q", bare, "develop")
		gittest.Run(t, bare, "symbolic-ref", "HEAD", "refs/heads/develop")
		dir := filepath.Join(t.TempDir(), "Billing API")
		gittest.Run(t, filepath.Dir(dir), "clone", "-q", bare, dir)
		gittest.Run(t, dir, "switch", "-q", "-c", "my-feature") // not the default branch
		return dir
	}
	tests := []struct {
		name, template    string
		repo              func(t *testing.T) string
		project, default_ string
	}{
		{"a fresh repository on trunk", "", func(t *testing.T) string { return fresh(t, "shop", "trunk") }, "shop", "trunk"},
		{"an example in it", "review-loop", func(t *testing.T) string { return fresh(t, "shop", "trunk") }, "shop", "trunk"},
		{"a clone, on a feature branch", "", cloned, "billing-api", "develop"},
		{"a branch YAML would read as a boolean", "quick", func(t *testing.T) string { return fresh(t, "shop", "yes") }, "shop", `"yes"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.repo(t)
			args := []string{"init"}
			if tt.template != "" {
				args = append(args, "--template", tt.template)
			}
			r := invokeIn(t, dir, humanEnv, args...)
			require.Equal(t, exitOK, r.code, r.stderr)
			text := read(t, filepath.Join(dir, stages.FileName))
			assert.Contains(t, text, "\nproject: "+tt.project+"\n")
			assert.Contains(t, text, "\ndefault_branch: "+tt.default_+"\n")
			assert.NotContains(t, text, "default_branch: main\n", "the made-up branch is gone")
		})
	}
}
