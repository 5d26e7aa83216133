package configcmd

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gitx"
)

// repoFacts are what init reads from the repository to fill in a config:
// the project's name and the branch pull requests merge into.
type repoFacts struct {
	project, defaultBranch string
}

// readRepo works out dir's project name (its directory's, as a slug) and
// default branch: origin's HEAD when it has one, else main or master when
// the repository has that branch, else the branch checked out (in a fresh
// repository, git's init.defaultBranch), else main.
func readRepo(ctx context.Context, dir string) repoFacts {
	f := repoFacts{project: issues.Slugify(filepath.Base(dir)), defaultBranch: "main"}
	if f.project == "" {
		f.project = "myapp"
	}
	git := &gitx.Repo{Dir: dir}
	if out, err := git.Run(ctx, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"); err == nil {
		if b, ok := strings.CutPrefix(strings.TrimSpace(out), "origin/"); ok && b != "" {
			f.defaultBranch = b
			return f
		}
	}
	for _, b := range []string{"main", "master"} {
		if _, err := git.Run(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+b); err == nil {
			f.defaultBranch = b
			return f
		}
	}
	if out, err := git.Run(ctx, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil && strings.TrimSpace(out) != "" {
		f.defaultBranch = strings.TrimSpace(out)
	}
	return f
}

// tailor puts the repository's facts in an example's top-level `project:`
// and `default_branch:` lines, written for a made-up repository. Only
// those whole lines change, so the example's comments and layout stay as
// they are.
func tailor(config []byte, f repoFacts) []byte {
	lines := bytes.SplitAfter(config, []byte("\n"))
	for i, line := range lines {
		key, _, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		switch string(key) {
		case "project":
			lines[i] = scalarLine("project", f.project)
		case "default_branch":
			lines[i] = scalarLine("default_branch", f.defaultBranch)
		}
	}
	return bytes.Join(lines, nil)
}

// scalarLine is `key: value` with value quoted as YAML needs it (a branch
// may be named `yes` or hold a `#`).
func scalarLine(key, value string) []byte {
	out, err := yaml.Marshal(map[string]string{key: value})
	if err != nil { // a string always encodes
		panic(err)
	}
	return out
}
