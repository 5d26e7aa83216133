// Package prquery reads the one kind of GraphQL query the fake GitHub
// server answers, repository { pullRequest(number: N) { ... } } as
// forge/github/ghapi sends it, into what the answer needs: the
// repository, each aliased pullRequest and the pages of its connections.
// Reading the query apart from answering it keeps the parser's walk out of
// the fake's repository state.
package prquery

import (
	"cmp"
	"slices"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/gql"
)

// Query is what the fake reads from a query: the repository, each
// pullRequest selection, and the pages of the connections it answers.
// It answers every pullRequest with the same field set, the union of what
// forge/github/ghapi asks for.
type Query struct {
	Owner, Name string
	PRs         []Selection
	Contexts    int // contexts(first:) of the status check rollup
	Reviews     int // latestOpinionatedReviews(first:)
	WritersOnly bool
	// Threads and ThreadsAfter are reviewThreads(first:, after:);
	// ThreadComments is first: of a thread's comments.
	Threads        int
	ThreadsAfter   string
	ThreadComments int
}

// Selection is `alias: pullRequest(number: N)`, N as the query has it.
type Selection struct{ Alias, Number string }

// Read reads req's query with its variables filled in; ok is false
// when it asks for no repository(owner:, name:).
func Read(req gql.Request) (q Query, ok bool, err error) {
	q = Query{Contexts: 100, Reviews: 100, Threads: 100, ThreadComments: 100}
	err = req.Walk(func(f gql.Field) {
		switch f.Name {
		case "repository":
			q.Owner, _ = f.Arg("owner")
			q.Name, ok = f.Arg("name")
		case "pullRequest":
			n, _ := f.Arg("number")
			q.PRs = append(q.PRs, Selection{cmp.Or(f.Alias, f.Name), n})
		case "contexts":
			q.Contexts = f.First(q.Contexts)
		case "latestOpinionatedReviews":
			q.Reviews = f.First(q.Reviews)
			w, _ := f.Arg("writersOnly")
			q.WritersOnly = w == "true"
		case "reviewThreads":
			q.Threads = f.First(q.Threads)
			q.ThreadsAfter, _ = f.Arg("after")
		case "comments":
			if slices.Contains(f.Parents, "reviewThreads") {
				q.ThreadComments = f.First(q.ThreadComments)
			}
		}
	})
	return q, ok && q.Owner != "", err
}
