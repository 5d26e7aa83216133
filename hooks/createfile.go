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

// createFile gives the agent a stage document to fill in, from a template
// file or inline content. It never overwrites: once the file exists the
// agent may have edited it, so a second call (entering the stage again
// after a step back) keeps it. The engine writes Outcome.Files.
func createFile(_ context.Context, c *Call) Outcome {
	dest := c.Params.String("dest", "")
	if dest == "." || dest == ".." || strings.ContainsAny(dest, `/\`) {
		return Failf("create_file: dest %q must be a plain file name in the issue directory (no directories, no `..`); fix the hook in the config", dest)
	}
	if c.Issue.Dir == "" {
		return Failf("create_file: the issue has no directory to create %s in", dest)
	}
	switch fi, err := os.Lstat(filepath.Join(c.Issue.Dir, dest)); {
	case err == nil && fi.IsDir():
		return Failf("create_file: %s is a directory in the issue directory %s; remove it so the file can be created, %s", dest, c.Issue.Dir, nextHint)
	case err == nil:
		return Pass()
	case !errors.Is(err, fs.ErrNotExist):
		return Failf("create_file: %s: %v", dest, err)
	}

	text, ok := c.Params["content"].(string)
	if !ok {
		var err error
		if text, err = readTemplate(c, c.Params.String("template", "")); err != nil {
			return Failf("create_file: %s", err)
		}
	}
	o := Pass()
	o.Files = map[string]string{dest: stages.Render(text, c.Issue.MessageVars())}
	return o
}

// readTemplate finds a template the way the earlier tool laid them out:
// <config dir>/_agenttree/templates, then <config dir>/templates, then the
// path relative to the config dir.
func readTemplate(c *Call, name string) (string, error) {
	if c.Env == nil || c.Env.Config == nil || c.Env.Config.File == "" {
		return "", fmt.Errorf("template %s: no config file is known to find templates next to; give the content inline with `content:`", name)
	}
	clean := filepath.Clean(name)
	if name == "" || filepath.IsAbs(name) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("template %q must be a path relative to the config directory; fix the hook in the config", name)
	}
	root := filepath.Dir(c.Env.Config.File)
	var tried []string
	for _, dir := range []string{filepath.Join(root, "_agenttree", "templates"), filepath.Join(root, "templates"), root} {
		path := filepath.Join(dir, clean)
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
