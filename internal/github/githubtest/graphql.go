package githubtest

import (
	"cmp"
	"fmt"
	"net/http"
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

type gqlRequest struct {
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables"`
}

// prQuery is what the fake reads from a query: the repository, each
// pullRequest selection, and the page sizes of the connections it answers.
// It answers every pullRequest with the same field set, the one
// internal/github asks for.
type prQuery struct {
	owner, name string
	prs         []prSelection
	contexts    int // contexts(first:) of the status check rollup
	reviews     int // latestOpinionatedReviews(first:)
	writersOnly bool
}

// prSelection is `alias: pullRequest(number: N)`, N as the query has it.
type prSelection struct{ alias, number string }

// readPRQuery parses req's query (gqlparser, no schema) and reads it with
// its variables filled in; ok is false when it asks for no
// repository(owner:, name:).
func readPRQuery(req gqlRequest) (q prQuery, ok bool, err error) {
	doc, perr := parser.ParseQuery(&ast.Source{Input: req.Query})
	if perr != nil {
		return q, false, perr
	}
	arg := func(f *ast.Field, name string) (string, bool) {
		a := f.Arguments.ForName(name)
		if a == nil {
			return "", false
		}
		v, err := a.Value.Value(req.Variables)
		return fmt.Sprint(v), err == nil && v != nil
	}
	q = prQuery{contexts: 100, reviews: 100}
	walk(doc, func(f *ast.Field) {
		switch f.Name {
		case "repository":
			q.owner, _ = arg(f, "owner")
			q.name, ok = arg(f, "name")
		case "pullRequest":
			n, _ := arg(f, "number")
			q.prs = append(q.prs, prSelection{cmp.Or(f.Alias, f.Name), n})
		case "contexts":
			if n, set := arg(f, "first"); set {
				q.contexts, _ = strconv.Atoi(n)
			}
		case "latestOpinionatedReviews":
			if n, set := arg(f, "first"); set {
				q.reviews, _ = strconv.Atoi(n)
			}
			w, _ := arg(f, "writersOnly")
			q.writersOnly = w == "true"
		}
	})
	return q, ok && q.owner != "", nil
}

// walk calls visit for every field of doc, depth first: of its operations
// and of its fragments (which the pullRequest selections spread).
func walk(doc *ast.QueryDocument, visit func(*ast.Field)) {
	var sel func(ast.SelectionSet)
	sel = func(set ast.SelectionSet) {
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				visit(s)
				sel(s.SelectionSet)
			case *ast.InlineFragment:
				sel(s.SelectionSet)
			}
		}
	}
	for _, op := range doc.Operations {
		sel(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		sel(f.SelectionSet)
	}
}

func gqlError(typ, msg string, path ...any) map[string]any {
	e := map[string]any{"message": msg, "locations": []map[string]int{{"line": 1, "column": 1}}}
	if typ != "" {
		e["type"] = typ
	}
	if len(path) > 0 {
		e["path"] = path
	}
	return e
}

// graphql answers a query the way GitHub does: 200 even for what it cannot
// find, with a NOT_FOUND error per missing repository or PR.
func (s *Server) graphql(r *http.Request) reply {
	var req gqlRequest
	if rep := decode(r, &req); rep != nil {
		return *rep
	}
	q, ok, err := readPRQuery(req)
	if err != nil {
		return jsonReply(http.StatusOK, map[string]any{"errors": []any{gqlError("", "Parse error: "+err.Error())}})
	}
	if !ok {
		return jsonReply(http.StatusOK, map[string]any{"errors": []any{
			gqlError("", "the fake GitHub server only answers repository { pullRequest(number: N) } queries"),
		}})
	}
	repo := s.repos[repoKey(q.owner+"/"+q.name)]
	if repo == nil {
		return jsonReply(http.StatusOK, map[string]any{
			"data": map[string]any{"repository": nil},
			"errors": []any{gqlError("NOT_FOUND",
				fmt.Sprintf("Could not resolve to a Repository with the name '%s/%s'.", q.owner, q.name), "repository")},
		})
	}
	data := map[string]any{}
	var errs []any
	for _, sel := range q.prs {
		n, err := strconv.Atoi(sel.number)
		p, ok := repo.prs[n]
		if err != nil || !ok {
			data[sel.alias] = nil
			errs = append(errs, gqlError("NOT_FOUND",
				fmt.Sprintf("Could not resolve to a PullRequest with the number of %s.", sel.number), "repository", sel.alias))
			continue
		}
		data[sel.alias] = prNode(repo, p, q)
	}
	out := map[string]any{"data": map[string]any{"repository": data}}
	if len(errs) > 0 {
		out["errors"] = errs
	}
	return jsonReply(http.StatusOK, out)
}
