// Package gql is the request side of a GraphQL server without a schema,
// for the fake GitHub: it reads a request's query with gqlparser, walks
// its fields with their arguments resolved against the variables, names
// its operation, and renders connections and errors the way GitHub does.
package gql

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// Request is a GraphQL request body.
type Request struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
}

// Field is one field of a query, as Walk visits it.
type Field struct {
	Name, Alias string
	// Parents are the names of the fields it is in, outermost first.
	Parents []string

	args ast.ArgumentList
	vars map[string]any
}

// Arg is the value of the field's argument name, literal or variable,
// spelled as text; ok is false when it is absent or null.
func (f Field) Arg(name string) (value string, ok bool) {
	a := f.args.ForName(name)
	if a == nil {
		return "", false
	}
	v, err := a.Value.Value(f.vars)
	return fmt.Sprint(v), err == nil && v != nil
}

// First is the field's first: argument, or def when it has none.
func (f Field) First(def int) int {
	if v, ok := f.Arg("first"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

// Walk parses req's query and calls visit for every field of it, depth
// first: of its operations and of its fragments (which selections
// spread).
func (req Request) Walk(visit func(Field)) error {
	doc, err := parser.ParseQuery(&ast.Source{Input: req.Query})
	if err != nil {
		return err
	}
	var sel func(ast.SelectionSet, []string)
	sel = func(set ast.SelectionSet, parents []string) {
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				visit(Field{Name: s.Name, Alias: s.Alias, Parents: parents, args: s.Arguments, vars: req.Variables})
				sel(s.SelectionSet, append(parents[:len(parents):len(parents)], s.Name))
			case *ast.InlineFragment:
				sel(s.SelectionSet, parents)
			}
		}
	}
	for _, op := range doc.Operations {
		sel(op.SelectionSet, nil)
	}
	for _, f := range doc.Fragments {
		sel(f.SelectionSet, nil)
	}
	return nil
}

// OperationName names the GraphQL request r: its operationName, else the
// name of its query's first operation; "" for an anonymous or unreadable
// one. It leaves r's body readable.
func OperationName(r *http.Request) string {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req Request
	if err != nil || json.Unmarshal(body, &req) != nil {
		return ""
	}
	if req.OperationName != "" {
		return req.OperationName
	}
	doc, perr := parser.ParseQuery(&ast.Source{Input: req.Query})
	if perr != nil || len(doc.Operations) == 0 {
		return ""
	}
	return doc.Operations[0].Name
}

// Error is one entry of a GraphQL answer's errors: of a GitHub type
// (NOT_FOUND, ...; none when empty), at path in the data.
func Error(typ, msg string, path ...any) map[string]any {
	e := map[string]any{"message": msg, "locations": []map[string]int{{"line": 1, "column": 1}}}
	if typ != "" {
		e["type"] = typ
	}
	if len(path) > 0 {
		e["path"] = path
	}
	return e
}

// Connection is a connection over items: the first of them after the
// cursor after, with totalCount and pageInfo. Cursors are offsets.
func Connection[T any](items []T, after string, first int, node func(T) any) map[string]any {
	start := 0
	if n, err := strconv.Atoi(strings.TrimPrefix(after, "cursor:")); err == nil {
		start = min(max(n, 0), len(items))
	}
	end := min(start+max(first, 0), len(items))
	nodes := make([]any, 0, end-start)
	for _, it := range items[start:end] {
		nodes = append(nodes, node(it))
	}
	var cursor any
	if end > start {
		cursor = "cursor:" + strconv.Itoa(end)
	}
	return map[string]any{
		"totalCount": len(items),
		"pageInfo":   map[string]any{"hasNextPage": end < len(items), "endCursor": cursor},
		"nodes":      nodes,
	}
}
