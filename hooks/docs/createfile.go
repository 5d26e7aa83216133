package docs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/internal/phrase"
	"github.com/agenttree/agenttree/stages"
)

var (
	destParam     = hooks.String("dest", "the file to create: a plain file name in the issue directory").Required()
	templateParam = hooks.String("template",
		"a template file relative to the config directory, looked for in _agenttree/templates/, then templates/, then the directory itself")
	contentParam = hooks.Template("content", "the file's content, inline, with {{placeholders}}")
)

// createFile gives the agent a stage document to fill in, from a template
// file or inline content. It never overwrites: once the file exists the
// agent may have edited it, so a second call (entering the stage again
// after a step back) keeps it. The engine writes Outcome.Files.
func createFile(_ context.Context, c *hooks.Call) hooks.Outcome {
	dest := destParam.Get(c)
	if dest == "." || dest == ".." || strings.ContainsAny(dest, `/\`) {
		return hooks.Failf("create_file: dest %q must be a plain file name in the issue directory (no directories, no `..`); fix the hook in the config", dest)
	}
	if c.Issue.Dir == "" {
		return hooks.Failf("create_file: the issue has no directory to create %s in", dest)
	}
	switch fi, err := os.Lstat(filepath.Join(c.Issue.Dir, dest)); {
	case err == nil && fi.IsDir():
		return hooks.Failf("create_file: %s is a directory in the issue directory %s; remove it so the file can be created, %s", dest, c.Issue.Dir, phrase.NextHint)
	case err == nil:
		return hooks.Pass()
	case !errors.Is(err, fs.ErrNotExist):
		return hooks.Failf("create_file: %s: %v", dest, err)
	}

	text, ok := contentParam.Lookup(c)
	if !ok {
		var err error
		if text, err = readTemplate(c, templateParam.Get(c)); err != nil {
			return hooks.Failf("create_file: %s", err)
		}
	}
	o := hooks.Pass()
	o.Files = map[string]string{dest: stages.Render(text, c.Issue.MessageVars())}
	return o
}

// readTemplate finds a template the way the earlier tool laid them out:
// <config dir>/_agenttree/templates, then <config dir>/templates, then the
// path relative to the config dir.
func readTemplate(c *hooks.Call, name string) (string, error) {
	if c.Env == nil || c.Env.Config == nil || c.Env.Config.File == "" {
		return "", fmt.Errorf("template %s: no config file is known to find templates next to; give the content inline with `content:`", name)
	}
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("template %q must be a path relative to the config directory; fix the hook in the config", name)
	}
	root := filepath.Dir(c.Env.Config.File)
	var tried []string
	for _, dir := range []string{filepath.Join(root, "_agenttree", "templates"), filepath.Join(root, "templates"), root} {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			return string(data), nil
		case errors.Is(err, fs.ErrNotExist):
			tried = append(tried, path)
		default:
			return "", fmt.Errorf("template %s: %w", path, err)
		}
	}
	return "", fmt.Errorf("template %s not found (looked for %s); create it, or fix `template:` in the config", name, strings.Join(tried, ", "))
}
