package githubtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// list GETs a REST list and decodes its array.
func list(t *testing.T, srv *Server, path string) []map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "token "+srv.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out []map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

func TestCommentsAndReviewsAsGitHubListsThem(t *testing.T) {
	srv := New(t)
	n := srv.AddPR(PR{HeadSHA: "abc", Comments: []string{"opened"}})
	id := srv.AddComment(n, Comment{Author: "alice", Body: "why?"})
	rv := srv.AddReview(n, Review{Author: "bob", State: "CHANGES_REQUESTED", Body: "see inline"})
	srv.AddReview(n, Review{Author: "eve", State: "COMMENTED", NoWriteAccess: true})
	base := "/repos/octo/app/"

	comments := list(t, srv, base+"issues/"+strconv.Itoa(n)+"/comments")
	require.Len(t, comments, 2)
	assert.Equal(t, "octocat", comments[0]["user"].(map[string]any)["login"], "the token's user")
	assert.EqualValues(t, id, comments[1]["id"])
	assert.Equal(t, "alice", comments[1]["user"].(map[string]any)["login"])
	assert.Equal(t, "why?", comments[1]["body"])
	assert.Contains(t, comments[1]["html_url"], "#issuecomment-"+strconv.FormatInt(id, 10))

	reviews := list(t, srv, base+"pulls/"+strconv.Itoa(n)+"/reviews?per_page=1&page=1")
	require.Len(t, reviews, 1, "paginated")
	r := reviews[0]
	assert.EqualValues(t, rv, r["id"])
	assert.Equal(t, "bob", r["user"].(map[string]any)["login"])
	assert.Equal(t, "see inline", r["body"])
	assert.Equal(t, "CHANGES_REQUESTED", r["state"])
	assert.Equal(t, "abc", r["commit_id"])
	assert.NotNil(t, r["submitted_at"])
	assert.Contains(t, r["html_url"], "#pullrequestreview-")
	second := list(t, srv, base+"pulls/"+strconv.Itoa(n)+"/reviews?per_page=1&page=2")
	require.Len(t, second, 1)
	assert.Equal(t, "", second[0]["body"])
	assert.Equal(t, "NONE", second[0]["author_association"])
	assert.Empty(t, list(t, srv, base+"pulls/"+strconv.Itoa(n)+"/reviews?per_page=1&page=3"))
}

func TestReviewThreadsAsGraphQLAnswersThem(t *testing.T) {
	srv := New(t)
	n := srv.AddPR(PR{HeadSHA: "abc"})
	first := srv.AddThread(n, Thread{Path: "a.go", Line: 3, Comments: []Comment{{Author: "alice", Body: "here"}}})
	srv.ReplyToThread(n, first, Comment{Author: "bob", Body: "done"})
	second := srv.AddThread(n, Thread{Path: "b.go", Comments: []Comment{{Body: "outdated"}}})
	srv.ResolveThread(n, second)

	page := func(after string) map[string]any {
		t.Helper()
		q := `query Threads($n: Int!, $after: String) { repository(owner: "octo", name: "app") { pullRequest(number: $n) {
		  reviewThreads(first: 1, after: $after) { totalCount pageInfo { hasNextPage endCursor }
		    nodes { id isResolved path line comments(first: 1) { totalCount nodes { author { login } body url createdAt } } } } } } }`
		vars := map[string]any{"n": n, "after": nil}
		if after != "" {
			vars["after"] = after
		}
		body, err := json.Marshal(map[string]any{"query": q, "variables": vars})
		require.NoError(t, err)
		resp, out := do(t, srv, "POST", "/graphql", string(body))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Nil(t, out["errors"])
		pr := out["data"].(map[string]any)["repository"].(map[string]any)["pullRequest"].(map[string]any)
		return pr["reviewThreads"].(map[string]any)
	}

	p1 := page("")
	assert.EqualValues(t, 2, p1["totalCount"])
	info := p1["pageInfo"].(map[string]any)
	require.Equal(t, true, info["hasNextPage"])
	th := p1["nodes"].([]any)[0].(map[string]any)
	assert.Equal(t, first, th["id"])
	assert.Equal(t, false, th["isResolved"])
	assert.Equal(t, "a.go", th["path"])
	assert.EqualValues(t, 3, th["line"])
	comments := th["comments"].(map[string]any)
	assert.EqualValues(t, 2, comments["totalCount"])
	require.Len(t, comments["nodes"], 1, "first: 1")
	c := comments["nodes"].([]any)[0].(map[string]any)
	assert.Equal(t, "alice", c["author"].(map[string]any)["login"])
	assert.Equal(t, "here", c["body"])
	assert.Contains(t, c["url"], "#discussion_r")

	p2 := page(info["endCursor"].(string))
	assert.Equal(t, false, p2["pageInfo"].(map[string]any)["hasNextPage"])
	th = p2["nodes"].([]any)[0].(map[string]any)
	assert.Equal(t, second, th["id"])
	assert.Equal(t, true, th["isResolved"])
	assert.Nil(t, th["line"], "an outdated thread has no line")

	assert.Equal(t, 2, srv.Queries("Threads"), "counted by operation")
	assert.Equal(t, 2, srv.Requests(EndpointGraphQL))
	assert.Zero(t, srv.Queries("PRStates"))
}
