package webhook_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/webhook"
)

var secret = []byte("It's a Secret to Everybody")

func TestVerify(t *testing.T) {
	body := []byte(`{"action":"completed"}`)
	other := []byte(`{"action":"created"}`)
	mac := hmac.New(sha1.New, secret)
	mac.Write(body)
	sha1Sig := "sha1=" + hex.EncodeToString(mac.Sum(nil))
	tests := []struct {
		name      string
		secrets   [][]byte
		body      []byte
		signature string
		want      error
	}{
		{"good", [][]byte{secret}, body, webhook.Sign(secret, body), nil},
		{"good under the second secret", [][]byte{[]byte("old"), secret}, body, webhook.Sign(secret, body), nil},
		{"missing", [][]byte{secret}, body, "", webhook.ErrUnsigned},
		{"another secret", [][]byte{secret}, body, webhook.Sign([]byte("guess"), body), webhook.ErrBadSignature},
		{"sha1, GitHub's older header's algorithm", [][]byte{secret}, body, sha1Sig, webhook.ErrBadSignature},
		{"a body replayed under another's signature", [][]byte{secret}, body, webhook.Sign(secret, other), webhook.ErrBadSignature},
		{"not hex", [][]byte{secret}, body, "sha256=zz", webhook.ErrBadSignature},
		{"truncated", [][]byte{secret}, body, webhook.Sign(secret, body)[:40], webhook.ErrBadSignature},
		{"no secret held", nil, body, webhook.Sign(nil, body), webhook.ErrBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhook.Verify(tt.secrets, tt.body, tt.signature)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

// GitHub's documented sample: the secret, payload and signature of its
// "Validating webhook deliveries" page.
func TestSignMatchesGitHubsExample(t *testing.T) {
	assert.Equal(t, "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17", webhook.Sign(secret, []byte("Hello, World!")))
}

func TestParse(t *testing.T) {
	const sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	repo := `"repository":{"full_name":"octo/app"}`
	tests := []struct {
		name, event, body string
		want              []forge.Change
	}{
		{"check run of two PRs", "check_run",
			`{"action":"completed","check_run":{"id":4,"head_sha":"` + sha + `","status":"completed","conclusion":"failure","pull_requests":[{"number":3,"head":{"sha":"` + sha + `"}},{"number":5}]},` + repo + `}`,
			[]forge.Change{{PR: 3, SHA: sha, What: "check_run.completed"}, {PR: 5, SHA: sha, What: "check_run.completed"}}},
		{"check run of a fork's PR names no PR", "check_run", `{"action":"created","check_run":{"head_sha":"` + sha + `","pull_requests":[]},` + repo + `}`,
			[]forge.Change{{SHA: sha, What: "check_run.created"}}},
		{"check suite", "check_suite", `{"action":"completed","check_suite":{"head_sha":"` + sha + `","pull_requests":[{"number":7}]},` + repo + `}`,
			[]forge.Change{{PR: 7, SHA: sha, What: "check_suite.completed"}}},
		{"status", "status", `{"sha":"` + sha + `","state":"failure","context":"ci",` + repo + `}`,
			[]forge.Change{{SHA: sha, What: "status"}}},
		{"push", "push", `{"ref":"refs/heads/issue-3","before":"0000","after":"` + sha + `",` + repo + `}`,
			[]forge.Change{{SHA: sha, What: "push"}}},
		{"push of a tag", "push", `{"ref":"refs/tags/v1","after":"` + sha + `",` + repo + `}`, nil},
		{"branch deleted", "push", `{"ref":"refs/heads/x","after":"0000000000000000000000000000000000000000","deleted":true,` + repo + `}`, nil},
		{"pull request synchronize", "pull_request", `{"action":"synchronize","number":3,"pull_request":{"number":3,"head":{"sha":"` + sha + `"}},` + repo + `}`,
			[]forge.Change{{PR: 3, SHA: sha, What: "pull_request.synchronize"}}},
		{"review", "pull_request_review", `{"action":"submitted","review":{"state":"changes_requested"},"pull_request":{"number":3,"head":{"sha":"` + sha + `"}},` + repo + `}`,
			[]forge.Change{{PR: 3, SHA: sha, What: "pull_request_review.submitted"}}},
		{"review comment", "pull_request_review_comment", `{"action":"created","comment":{"body":"nit"},"pull_request":{"number":9,"head":{"sha":"` + sha + `"}},` + repo + `}`,
			[]forge.Change{{PR: 9, SHA: sha, What: "pull_request_review_comment.created"}}},
		{"another repository", "pull_request", `{"action":"opened","pull_request":{"number":3},"repository":{"full_name":"evil/app"}}`, nil},
		{"repository in another case", "pull_request", `{"action":"closed","pull_request":{"number":3},"repository":{"full_name":"Octo/App"}}`,
			[]forge.Change{{PR: 3, What: "pull_request.closed"}}},
		{"ping", "ping", `{"zen":"Keep it logically awesome.","hook_id":1}`, nil},
		{"issues", "issues", `{"action":"opened","issue":{"number":3}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhook.Parse(tt.event, []byte(tt.body), "octo/app")
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := webhook.Parse("check_run", []byte(`{"check_run":`), "octo/app")
	assert.Error(t, err)
}

func TestReceiver(t *testing.T) {
	var got []forge.Change
	rc := webhook.New(webhook.Options{Secrets: func() [][]byte { return [][]byte{secret} }, Repo: "octo/app", MaxBody: 512,
		Changed: func(c forge.Change) { got = append(got, c) }})
	body := `{"action":"opened","pull_request":{"number":3,"head":{"sha":"abc"}},"repository":{"full_name":"octo/app"}}`
	deliver := func(method, body, signature string) int {
		r := httptest.NewRequest(method, "/", strings.NewReader(body))
		r.Header.Set("X-GitHub-Event", "pull_request")
		r.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
		if signature != "" {
			r.Header.Set("X-Hub-Signature-256", signature)
		}
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, r)
		return w.Code
	}
	assert.Equal(t, http.StatusNoContent, deliver(http.MethodPost, body, webhook.Sign(secret, []byte(body))))
	assert.Equal(t, []forge.Change{{PR: 3, SHA: "abc", What: "pull_request.opened"}}, got)

	big := `{"pad":"` + strings.Repeat("x", 600) + `"}`
	for _, tt := range []struct {
		name         string
		method, body string
		signature    string
		want         int
	}{
		{"unsigned", http.MethodPost, body, "", http.StatusUnauthorized},
		{"badly signed", http.MethodPost, body, webhook.Sign([]byte("guess"), []byte(body)), http.StatusForbidden},
		{"a GET", http.MethodGet, "", webhook.Sign(secret, nil), http.StatusMethodNotAllowed},
		{"too large", http.MethodPost, big, webhook.Sign(secret, []byte(big)), http.StatusRequestEntityTooLarge},
	} {
		assert.Equal(t, tt.want, deliver(tt.method, tt.body, tt.signature), tt.name)
	}
	st := rc.Stats()
	assert.Equal(t, int64(1), st.Accepted)
	assert.Equal(t, int64(4), st.Refused)
	assert.Equal(t, int64(1), st.Changes)
	assert.Len(t, got, 1, "a refused delivery tells of no change")
	assert.False(t, st.Last.IsZero())
}
