package githubtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func do(t *testing.T, srv *Server, method, path, body string, header ...string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "token "+srv.Token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(t, json.Unmarshal(raw, &out))
	}
	return resp, out
}

func TestAuthIsRequired(t *testing.T) {
	srv := New(t)
	for _, h := range []string{"", "token nope", "Basic abc"} {
		req, _ := http.NewRequest("GET", srv.URL+"/repos/octo/app", nil)
		if h != "" {
			req.Header.Set("Authorization", h)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, h)
	}
	resp, _ := do(t, srv, "GET", "/repos/octo/app", "", "Authorization", "Bearer "+srv.Token)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestETagsAndRateLimitHeaders(t *testing.T) {
	srv := New(t)
	resp, _ := do(t, srv, "GET", "/repos/octo/app/commits/main/check-runs", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	etag := resp.Header.Get("ETag")
	require.NotEmpty(t, etag)
	assert.Equal(t, "4999", resp.Header.Get("X-RateLimit-Remaining"))
	assert.Equal(t, "core", resp.Header.Get("X-RateLimit-Resource"))
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Reset", "X-RateLimit-Used"} {
		assert.NotEmpty(t, resp.Header.Get(h), h)
	}

	resp, _ = do(t, srv, "GET", "/repos/octo/app/commits/main/check-runs", "", "If-None-Match", etag)
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	assert.Equal(t, "4999", resp.Header.Get("X-RateLimit-Remaining"), "a 304 is free")
	assert.Equal(t, 2, srv.Requests(EndpointCheckRuns))
	assert.Equal(t, 1, srv.NotModified(EndpointCheckRuns))

	srv.AddCheckRun("0000000000000000000000000000000000000000", CheckRun{Name: "x"})
	resp, _ = do(t, srv, "GET", "/repos/octo/app/commits/main/check-runs", "", "If-None-Match", etag)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "changed")
}

func TestFaultsAreDeterministic(t *testing.T) {
	srv := New(t)
	srv.FailNext(2, Fault502.On(EndpointRepo))
	srv.FailNext(1, FaultSecondary)
	resp, _ := do(t, srv, "GET", "/repos/octo/app/pulls", "")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	for range 2 {
		resp, _ = do(t, srv, "GET", "/repos/octo/app", "")
		assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	}
	resp, _ = do(t, srv, "GET", "/repos/octo/app", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 3, srv.FaultsSent())
}

func TestEnterprisePathsAndGraphQL(t *testing.T) {
	srv := New(t)
	n := srv.AddPR(PR{HeadSHA: "abc", ReviewDecision: "APPROVED"})
	old := srv.AddCheckRun("abc", CheckRun{Name: "test"})
	srv.CompleteCheckRun(old, "failure")
	srv.AddCheckRun("abc", CheckRun{Name: "test"}) // a rerun supersedes it

	resp, body := do(t, srv, "GET", "/api/v3/repos/octo/app/commits/abc/check-runs", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.EqualValues(t, 1, body["total_count"], "filter=latest")

	q := `{"query":"query($owner: String!, $name: String!, $n: Int!) { repository(owner: $owner, name: $name) { a: pullRequest(number: $n) { number } b: pullRequest(number: 404) { number } } }",
	       "variables":{"owner":"octo","name":"app","n":` + jsonNum(n) + `}}`
	resp, body = do(t, srv, "POST", "/api/graphql", q)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "graphql", resp.Header.Get("X-RateLimit-Resource"))
	repo := body["data"].(map[string]any)["repository"].(map[string]any)
	a := repo["a"].(map[string]any)
	assert.EqualValues(t, n, a["number"])
	assert.Equal(t, "APPROVED", a["reviewDecision"])
	assert.Nil(t, repo["b"])
	errs := body["errors"].([]any)
	require.Len(t, errs, 1)
	assert.Equal(t, "NOT_FOUND", errs[0].(map[string]any)["type"])
	assert.Equal(t, 1, srv.Requests(EndpointGraphQL))
}

func jsonNum(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestGraphQLThatDoesNotParse(t *testing.T) {
	srv := New(t)
	srv.AddPR(PR{HeadSHA: "abc"})
	resp, body := do(t, srv, "POST", "/api/graphql", `{"query":"{ repository(owner: \"octo\", name: \"app\") { pullRequest(number: 1 { number } }"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GitHub answers 200 with errors")
	assert.Nil(t, body["data"])
	errs := body["errors"].([]any)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].(map[string]any)["message"], "Parse error")
}

func TestListPullsByHead(t *testing.T) {
	srv := New(t)
	srv.AddPR(PR{Branch: "a"})
	b := srv.AddPR(PR{Branch: "b"})
	srv.AddPR(PR{Branch: "b", State: "closed"})
	req, _ := http.NewRequest("GET", srv.URL+"/repos/octo/app/pulls?head=octo:b&state=open", nil)
	req.Header.Set("Authorization", "token "+srv.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var prs []map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&prs))
	require.Len(t, prs, 1)
	assert.EqualValues(t, b, prs[0]["number"])
	assert.NotContains(t, prs[0], "mergeable", "lists leave out the merge fields, as GitHub's do")
}

func TestUpdatePullState(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		status   int
		state    string // REST state after
		closed   bool   // closed_at set after
	}{
		{"close", "open", "closed", http.StatusOK, "closed", true},
		{"reopen", "closed", "open", http.StatusOK, "open", false},
		{"close a closed PR", "closed", "closed", http.StatusOK, "closed", true},
		{"merged stays merged", "merged", "open", http.StatusUnprocessableEntity, "", false},
		{"no such state", "open", "draft", http.StatusUnprocessableEntity, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(t)
			n := srv.AddPR(PR{State: tt.from})
			resp, body := do(t, srv, "PATCH", "/repos/octo/app/pulls/"+jsonNum(n), `{"state":"`+tt.to+`","title":"new"}`)
			require.Equal(t, tt.status, resp.StatusCode)
			pr, _ := srv.PR(n)
			if tt.status != http.StatusOK {
				assert.Equal(t, tt.from, pr.State, "unchanged")
				assert.NotEqual(t, "new", pr.Title, "nothing changes on a rejected update")
				return
			}
			assert.Equal(t, tt.state, body["state"])
			assert.Equal(t, tt.closed, body["closed_at"] != nil)
			assert.Equal(t, "new", pr.Title)
		})
	}
}
