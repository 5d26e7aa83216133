package docs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/internal/phrase"
)

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
	path, err := c.Issue.File(name)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(c, name, path); err != nil {
		return nil, err
	}
	data, err := c.Issue.ReadFile(name)
	if err != nil {
		return nil, err
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
	body, exact, ok := doc.section(name)
	if exact > 1 {
		return scope{}, "", fmt.Errorf("%s has %d sections titled %q; merge them into one, %s", file, exact, name, phrase.NextHint)
	}
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
