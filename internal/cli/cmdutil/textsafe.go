package main

import (
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/textsafe"
)

// maxShownText bounds one piece of stored text (a reason, a hook's
// failure, a label) in what people are shown.
const maxShownText = 300

// safeTitle is an issue's title as people's output shows it: one line,
// nothing a terminal acts on, no longer than a new title may be. Titles
// are checked when an issue is created; older ones, and issue.yaml files
// edited by hand, were not. --json output keeps the title as stored.
func safeTitle(title string) string { return textsafe.Line(title, engine.MaxTitleLen) }

// safeText is any other stored text, as safeTitle shows a title: what an
// agent, a hook or a hand edit put in the files.
func safeText(s string) string { return textsafe.Line(s, maxShownText) }
