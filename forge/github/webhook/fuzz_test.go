package webhook_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/webhook"
)

// FuzzReceiver delivers any body, as any event, signed with the secret or
// carrying any other signature, to a Receiver. A delivery whose signature
// does not match is refused and never decoded into a change (nor counted
// as a working hook); a signed one tells exactly the changes Parse finds
// in it, each of this repository and named after its event. Seeded with
// payloads in the shapes GitHub (and githubtest's fake) sends
// (testdata/fuzz/FuzzReceiver).
func FuzzReceiver(f *testing.F) {
	const sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	repo := `"repository":{"full_name":"octo/app"}`
	for _, seed := range []struct{ event, body string }{
		{"check_run", `{"action":"completed","check_run":{"id":4,"head_sha":"` + sha + `","status":"completed","conclusion":"failure","pull_requests":[{"number":3,"head":{"sha":"` + sha + `"}},{"number":5}]},` + repo + `}`},
		{"check_suite", `{"action":"completed","check_suite":{"head_sha":"` + sha + `","pull_requests":[{"number":7}]},` + repo + `}`},
		{"status", `{"sha":"` + sha + `","state":"failure","context":"ci",` + repo + `}`},
		{"push", `{"ref":"refs/heads/issue-3","before":"0000","after":"` + sha + `",` + repo + `}`},
		{"push", `{"ref":"refs/heads/issue-3","deleted":true,"after":"0000000000000000000000000000000000000000",` + repo + `}`},
		{"pull_request", `{"action":"synchronize","number":3,"pull_request":{"number":3,"head":{"sha":"` + sha + `"}},` + repo + `}`},
		{"pull_request_review", `{"action":"submitted","review":{"state":"approved"},"pull_request":{"number":3,"head":{"sha":"` + sha + `"}},` + repo + `}`},
		{"pull_request", `{"action":"opened","pull_request":{"number":9},"repository":{"full_name":"someone/else"}}`},
		{"ping", `{"zen":"Keep it logically awesome.","hook_id":1,` + repo + `}`},
	} {
		f.Add(seed.event, []byte(seed.body), "", true)
		f.Add(seed.event, []byte(seed.body), webhook.Sign([]byte("guess"), []byte(seed.body)), false)
	}
	f.Fuzz(func(t *testing.T, event string, body []byte, signature string, signed bool) {
		var changes []forge.Change
		var delivered int
		rc := webhook.New(webhook.Options{
			Secrets:   func() [][]byte { return [][]byte{secret} },
			Repo:      "octo/app",
			Changed:   func(c forge.Change) { changes = append(changes, c) },
			Delivered: func(string, string, string) { delivered++ },
		})
		if signed {
			signature = webhook.Sign(secret, body)
		}
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-Hub-Signature-256", signature)
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, req)

		if signature != webhook.Sign(secret, body) {
			require.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, w.Code)
			require.Empty(t, changes, "a badly signed delivery was decoded")
			require.Zero(t, delivered)
			require.Zero(t, rc.Stats().Accepted)
			return
		}
		require.Equal(t, http.StatusNoContent, w.Code)
		require.Equal(t, 1, delivered)
		want, _ := webhook.Parse(event, body, "octo/app")
		require.Equal(t, want, changes)
		for _, c := range changes {
			require.True(t, c.What == event || strings.HasPrefix(c.What, event+"."), "%q from a %q delivery", c.What, event)
		}
	})
}
