package docs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/internal/phrase"
)

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
	if leavesDir(clean) {
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
	if rel, err := filepath.Rel(root, real); err != nil || leavesDir(rel) {
		return "", fmt.Errorf("%s: a symlink leads outside the issue directory (to %s); replace it with the file itself", name, real)
	}
	return real, nil
}

// leavesDir reports whether a clean relative path climbs out of its base.
func leavesDir(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// checkRegular fails unless path is a regular file (after symlinks).
func checkRegular(c *hooks.Call, name, path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: not found in the issue directory %s; write it, %s", name, c.Issue.Dir, phrase.NextHint)
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	case fi.IsDir():
		return fmt.Errorf("%s: is a directory, not a file; write the document at that path, %s", name, phrase.NextHint)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: is not a regular file (%s); write the document at that path, %s", name, fi.Mode().Type(), phrase.NextHint)
	}
	return nil
}

// readDoc reads and parses the markdown file name of the issue directory.
func readDoc(c *hooks.Call, name string) (*document, error) {
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
	return parseDocument(data), nil
}

// docScope reads the `file` parameter and narrows it to section when one
// is given. where names the place for failure reasons: `review.md` or
// `review.md: section "Critical Issues"`.
func docScope(c *hooks.Call, section string) (s scope, where string, err error) {
	file := fileParam.Get(c)
	doc, err := readDoc(c, file)
	if err != nil {
		return scope{}, "", err
	}
	name := strings.TrimSpace(section)
	if name == "" {
		return doc.whole(), file, nil
	}
	body, ok := doc.section(name)
	if !ok {
		have := "it has no `##` or `###` headings"
		if titles := doc.sectionTitles(); len(titles) > 0 {
			have = "its sections are " + phrase.Quoted(titles)
		}
		return scope{}, "", fmt.Errorf("%s: no section %q (%s); add a `## %s` heading with its content, %s", file, name, have, name, phrase.NextHint)
	}
	return body, fmt.Sprintf("%s: section %q", file, name), nil
}

// checkFailed is a content check that did not hold: problem says what is
// wrong, fix what to do. With `on_fail` set the issue is redirected there
// instead of blocked; problems with the file itself (missing, outside the
// issue directory) never redirect, they block.
func checkFailed(c *hooks.Call, problem, fix string) hooks.Outcome {
	if to := onFailParam.Get(c); to != "" {
		return hooks.Redirect(to, problem)
	}
	return hooks.Failf("%s; %s, %s", problem, fix, phrase.NextHint)
}
