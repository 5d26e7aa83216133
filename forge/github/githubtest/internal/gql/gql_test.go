package gql

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWalk(t *testing.T) {
	req := Request{
		Query: `query Q($n: Int!, $after: String) { repository(owner: "octo", name: "app") {
		  a: pullRequest(number: $n) { ...f } } }
		  fragment f on PullRequest { reviewThreads(first: 5, after: $after) { nodes { comments(first: 2) { totalCount } } } }`,
		Variables: map[string]any{"n": 7, "after": nil},
	}
	var seen []string
	fields := map[string]Field{}
	require.NoError(t, req.Walk(func(f Field) {
		seen = append(seen, strings.Join(append(f.Parents, f.Name), "."))
		fields[f.Name] = f
	}))
	assert.Equal(t, []string{
		"repository", "repository.pullRequest",
		"reviewThreads", "reviewThreads.nodes", "reviewThreads.nodes.comments", "reviewThreads.nodes.comments.totalCount",
	}, seen, "operations, then fragments")

	owner, ok := fields["repository"].Arg("owner")
	assert.True(t, ok)
	assert.Equal(t, "octo", owner, "a literal")
	n, ok := fields["pullRequest"].Arg("number")
	assert.True(t, ok)
	assert.Equal(t, "7", n, "a variable")
	assert.Equal(t, "a", fields["pullRequest"].Alias)
	_, ok = fields["reviewThreads"].Arg("after")
	assert.False(t, ok, "null is no value")
	assert.Equal(t, 5, fields["reviewThreads"].First(100))
	assert.Equal(t, 100, fields["nodes"].First(100), "the default")

	assert.Error(t, Request{Query: "{ repository("}.Walk(func(Field) {}))
}

func TestConnection(t *testing.T) {
	items := []int{1, 2, 3, 4, 5}
	double := func(i int) any { return i * 2 }
	tests := []struct {
		after     string
		first     int
		nodes     []any
		hasNext   bool
		endCursor any
	}{
		{"", 2, []any{2, 4}, true, "cursor:2"},
		{"cursor:2", 2, []any{6, 8}, true, "cursor:4"},
		{"cursor:4", 2, []any{10}, false, "cursor:5"},
		{"cursor:5", 2, []any{}, false, nil},
		{"", 100, []any{2, 4, 6, 8, 10}, false, "cursor:5"},
		{"garbage", 1, []any{2}, true, "cursor:1"},
	}
	for _, tt := range tests {
		c := Connection(items, tt.after, tt.first, double)
		assert.Equal(t, 5, c["totalCount"], tt.after)
		assert.Equal(t, tt.nodes, c["nodes"], tt.after)
		assert.Equal(t, map[string]any{"hasNextPage": tt.hasNext, "endCursor": tt.endCursor}, c["pageInfo"], tt.after)
	}
}

func TestOperationName(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"query": "query PRStates { viewer { login } }"}`, "PRStates"},
		{`{"query": "query PRStates { viewer { login } }", "operationName": "Other"}`, "Other"},
		{`{"query": "{ viewer { login } }"}`, ""},
		{`not json`, ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(tt.body))
		assert.Equal(t, tt.want, OperationName(r), tt.body)
		rest, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		assert.Equal(t, tt.body, string(rest), "the body is left to read")
	}
}
