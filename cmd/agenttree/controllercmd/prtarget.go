package controllercmd

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
)

// prOfURL reads a PR's number out of its URL: GitHub's (…/OWNER/REPO/pull/45,
// any host, a trailing path, query or fragment allowed) or the local
// forge's (local:PROJECT#45). ok is false for anything else.
func prOfURL(arg string) (number int, ok bool) {
	if project, n, found := strings.Cut(strings.TrimPrefix(arg, "local:"), "#"); strings.HasPrefix(arg, "local:") && found && project != "" {
		return prNumberOf(n)
	}
	u, err := url.Parse(arg)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return 0, false
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) < 4 || parts[0] == "" || parts[1] == "" || parts[2] != "pull" {
		return 0, false
	}
	return prNumberOf(parts[3])
}

// prNumberOf reads a PR number: digits, not starting with 0.
func prNumberOf(s string) (int, bool) {
	if s == "" || s[0] == '0' || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// waitTarget is the issue `pr wait` waits on: arg is an issue id (a number
// alone, or #N, is always one) or a PR's URL; prNumber (--pr) is a PR's
// number.
func (a cmds) waitTarget(ctx context.Context, arg string, prNumber int) (*engine.Engine, int, error) {
	prURL := ""
	if n, ok := prOfURL(arg); ok {
		prURL, prNumber = arg, n
	}
	if prNumber == 0 && prURL == "" {
		return a.EngineFor(ctx, arg)
	}
	e, err := a.Engine(ctx)
	if err != nil {
		return nil, 0, err
	}
	id, err := issueOfPR(e, prNumber, prURL)
	return e, id, err
}

// issueOfPR finds the issue whose PR is number (and, given one, whose
// recorded PR URL is prURL). Several issues may have had the same PR (an
// issue dropped and its PR taken on by another): the one not at a
// terminal stage is meant; more than one left is for the person to name.
func issueOfPR(e *engine.Engine, number int, prURL string) (int, error) {
	name := fmt.Sprintf("PR #%d", number)
	if prURL != "" {
		name = prURL
	}
	// Scan, not Get for each: the issues status last read come from its
	// cache, not parsed again.
	listed, err := e.Store.Scan()
	if err != nil {
		return 0, err
	}
	var all, open []int
	for _, l := range listed {
		iss := l.Issue
		if l.Err != nil || iss.PRNumber != number || (prURL != "" && iss.PRURL != "" && !sameURL(iss.PRURL, prURL)) {
			continue
		}
		all = append(all, l.ID)
		if !finished(e, iss) {
			open = append(open, l.ID)
		}
	}
	switch {
	case len(all) == 0:
		return 0, fmt.Errorf("no issue here has %s (`agenttree status` lists the issues and their PRs); `pr wait` waits on the PRs agenttree opened", name)
	case len(all) == 1:
		return all[0], nil
	case len(open) == 1:
		return open[0], nil
	}
	among := open
	if len(among) == 0 {
		among = all
	}
	return 0, fmt.Errorf("%s belongs to issues %s; name the issue: `agenttree pr wait %d`", name, joinIDs(among), among[len(among)-1])
}

// finished reports whether iss is at a terminal stage (done or dropped).
func finished(e *engine.Engine, iss *issues.Issue) bool {
	n, ok := e.Config.Node(iss.Stage)
	return ok && n.Terminal() != stages.TerminalNone
}

func sameURL(a, b string) bool {
	trim := func(s string) string { return strings.TrimRight(strings.ToLower(s), "/") }
	return trim(a) == trim(b) || strings.HasPrefix(trim(b), trim(a)+"/") || strings.HasPrefix(trim(b), trim(a)+"#")
}

func joinIDs(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range slices.Sorted(slices.Values(ids)) {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ", ")
}
