package docs

import (
	"context"
	"strings"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/internal/phrase"
)

var (
	minWordsParam = hooks.Int("min", "the fewest words the document or section must have (code counts; headings, comments and list markers do not)").Required().AtLeast(0)
	textParam     = hooks.String("text", "text the document or section must contain (case matters; HTML comments do not count)")
	valuesParam   = hooks.List("values", "texts the document or section must all contain (the earlier tool's spelling of `text`)")
)

func fileExists(_ context.Context, c *hooks.Call) hooks.Outcome {
	name := fileParam.Get(c)
	path, err := c.Issue.File(name)
	if err == nil {
		err = checkRegular(c, name, path)
	}
	if err != nil {
		return hooks.Failf("%s", err)
	}
	return hooks.Pass()
}

func minWords(_ context.Context, c *hooks.Call) hooks.Outcome {
	s, where, err := docScope(c, sectionParam.Get(c))
	if err != nil {
		return hooks.Failf("%s", err)
	}
	min := minWordsParam.Get(c)
	if n := s.words(); n < min {
		return hooks.Failf("%s has %s, needs at least %d; write more, %s", where, phrase.Plural(n, "word", "words"), min, phrase.NextHint)
	}
	return hooks.Pass()
}

// containsText checks that a document holds `text`, or every one of
// `values` (the earlier tool's list spelling).
func containsText(_ context.Context, c *hooks.Call) hooks.Outcome {
	s, where, err := docScope(c, sectionParam.Get(c))
	if err != nil {
		return hooks.Failf("%s", err)
	}
	want := valuesParam.Get(c)
	if text, ok := textParam.Lookup(c); ok {
		want = []string{text}
	}
	body := s.text()
	var missing []string
	for _, w := range want {
		if !strings.Contains(body, w) {
			missing = append(missing, w)
		}
	}
	switch {
	case len(missing) == 1:
		return hooks.Failf("%s does not contain %q (case matters; HTML comments do not count); add it, %s", where, missing[0], phrase.NextHint)
	case len(missing) > 1:
		return hooks.Failf("%s does not contain %s (case matters; HTML comments do not count); add them, %s", where, phrase.Quoted(missing), phrase.NextHint)
	}
	return hooks.Pass()
}

func titleSet(_ context.Context, c *hooks.Call) hooks.Outcome {
	title := strings.TrimSpace(c.Issue.Title)
	if title == "" {
		return hooks.Failf("the issue has no title; set a real title that says what the issue is about, %s", phrase.NextHint)
	}
	// Titles people type before they know what the issue is.
	switch strings.ToLower(strings.Trim(title, " \t.:!?()[]<>*_-")) {
	case "untitled", "todo", "tbd", "new issue":
		return hooks.Failf("the issue title %q is a placeholder; set a real title that says what the issue is about, %s", title, phrase.NextHint)
	}
	return hooks.Pass()
}
