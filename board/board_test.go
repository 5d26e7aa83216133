package board_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/board"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/loopback"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

var person = engine.Actor{Kind: engine.ActorHuman}

// rig is a board over the cli pipeline's issues, served by httptest.
type rig struct {
	e   *engine.Engine
	srv *board.Server
	ts  *httptest.Server
}

func newRig(t *testing.T, opts ...engine.Option) *rig {
	t.Helper()
	return newRigWith(t, testpipeline.Read(t, "cli"), opts...)
}

// newRigWith is a board over the issues of a pipeline configured by config.
func newRigWith(t *testing.T, config string, opts ...engine.Option) *rig {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(config), 0o644))
	reg := builtin.Registry()
	cfg, err := load.File(path, reg)
	require.NoError(t, err)
	store, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(t, err)
	e := engine.New(cfg, store, reg, nil, opts...)
	srv, err := board.New(func() (*engine.Engine, error) { return e, nil }, person, nil)
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &rig{e: e, srv: srv, ts: ts}
}

func (r *rig) create(t *testing.T, title, stage string) *issues.Issue {
	t.Helper()
	iss, err := r.e.Create(context.Background(), engine.NewIssue{Title: title, Stage: stage})
	require.NoError(t, err)
	return iss
}

// url is the board's path with its login token.
func (r *rig) url(path string) string {
	return r.ts.URL + path + "?token=" + url.QueryEscape(r.srv.Token())
}

func (r *rig) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(r.url(path))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf is the CSRF token the issue's page carries in its forms.
func (r *rig) csrf(t *testing.T, id int) string {
	t.Helper()
	code, body := r.get(t, "/issues/"+itoa(id))
	require.Equal(t, http.StatusOK, code, body)
	m := csrfRE.FindStringSubmatch(body)
	require.NotNil(t, m, "the page's forms carry a CSRF token: %s", body)
	return m[1]
}

// post posts form to path with the login token, as a browser on the
// board's page does unless header says otherwise.
func (r *rig) post(t *testing.T, path string, form url.Values, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.url(path), strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", r.ts.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func itoa(n int) string { return strconv.Itoa(n) }

// Every request needs the login token: none is 401, another 403, in the
// query string or the header it is served; no answer sets a cookie.
func TestEveryRequestNeedsTheLoginToken(t *testing.T) {
	r := newRig(t)
	r.create(t, "Add login page", "implementation_review")
	tests := []struct {
		name, path, token, header string
		want                      int
	}{
		{name: "no token", path: "/", want: http.StatusUnauthorized},
		{name: "no token for a script", path: "/static/htmx.min.js", want: http.StatusUnauthorized},
		{name: "no token for an issue", path: "/issues/1", want: http.StatusUnauthorized},
		{name: "no token for events", path: "/events", want: http.StatusUnauthorized},
		{name: "wrong token", path: "/", token: "0123", want: http.StatusForbidden},
		{name: "a prefix of the token", path: "/", token: r.srv.Token()[:10], want: http.StatusForbidden},
		{name: "wrong header", path: "/", header: "nope", want: http.StatusForbidden},
		{name: "token in the query", path: "/", token: r.srv.Token(), want: http.StatusOK},
		{name: "token in the header", path: "/issues/1", header: r.srv.Token(), want: http.StatusOK},
		{name: "script with the token", path: "/static/htmx.min.js", token: r.srv.Token(), want: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := r.ts.URL + tt.path
			if tt.token != "" {
				u += "?token=" + tt.token
			}
			req, err := http.NewRequest(http.MethodGet, u, nil)
			require.NoError(t, err)
			if tt.header != "" {
				req.Header.Set("X-Agenttree-Token", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, tt.want, resp.StatusCode)
			assert.Empty(t, resp.Header.Values("Set-Cookie"), "the login is never a cookie")
			assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"), "the URL holds the token")
			assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
		})
	}
}

// An action is done only with the board's CSRF token, from the board's
// own origin; every refused one leaves the issue as it was.
func TestActionsNeedTheCSRFTokenAndTheBoardsOrigin(t *testing.T) {
	tests := []struct {
		name   string
		csrf   func(good string) string
		header map[string]string
		want   int
	}{
		{name: "no CSRF token", csrf: func(string) string { return "" }, want: http.StatusForbidden},
		{name: "a wrong CSRF token", csrf: func(good string) string { return strings.Repeat("0", len(good)) }, want: http.StatusForbidden},
		{name: "another board's CSRF token", csrf: func(string) string { return otherBoardsCSRF(t) }, want: http.StatusForbidden},
		{name: "from another site", header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, want: http.StatusForbidden},
		{name: "from another origin, no fetch metadata", header: map[string]string{"Sec-Fetch-Site": "", "Origin": "http://evil.example"}, want: http.StatusForbidden},
		{name: "the board's own form", want: http.StatusOK},
		{name: "a program without a browser's headers", header: map[string]string{"Sec-Fetch-Site": "", "Origin": ""}, want: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			iss := r.create(t, "Add login page", "implementation_review")
			good := r.csrf(t, iss.ID)
			token := good
			if tt.csrf != nil {
				token = tt.csrf(good)
			}
			code, body := r.post(t, "/issues/1/approve", url.Values{"csrf": {token}}, tt.header)
			assert.Equal(t, tt.want, code, body)
			after, err := r.e.Store.Get(iss.ID)
			require.NoError(t, err)
			if tt.want != http.StatusOK {
				assert.Equal(t, iss.Version, after.Version, "a refused action changes nothing")
				assert.Equal(t, "implementation_review", after.Stage)
				return
			}
			assert.Equal(t, "accepted", after.Stage)
			assert.Contains(t, body, "implementation_review → accepted", "the engine's result, as the CLI prints it")
		})
	}
}

// otherBoardsCSRF is the CSRF token of another board over other issues.
func otherBoardsCSRF(t *testing.T) string {
	other := newRig(t)
	other.create(t, "Elsewhere", "implementation_review")
	return other.csrf(t, 1)
}

// GETs change nothing: every page, and a GET of an action, leave the
// issue's files as they were.
func TestGetsChangeNothing(t *testing.T) {
	r := newRig(t)
	iss := r.create(t, "Add login page", "implementation_review")
	log := filepath.Join(r.e.Store.HostDir(iss.ID), "events.jsonl")
	before, err := os.ReadFile(log)
	require.NoError(t, err)
	for _, path := range []string{"/", "/issues/1", "/issues/1/approve", "/issues/1/abort", "/static/board.css"} {
		code, _ := r.get(t, path)
		assert.NotEqual(t, http.StatusInternalServerError, code, path)
	}
	code, _ := r.get(t, "/issues/1/approve")
	assert.Equal(t, http.StatusMethodNotAllowed, code, "an action is a POST")
	after, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
	got, err := r.e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, iss.Version, got.Version)
}

// People's actions go through the engine's entry points the CLI's
// commands use, with the same refusals, shown as the CLI prints them.
func TestActionsAreTheCLIsCommands(t *testing.T) {
	tests := []struct {
		name, stage, action string
		form                url.Values
		code                int
		want, to            string
	}{
		{name: "approve", stage: "implementation_review", action: "approve", code: 200, want: "moved", to: "accepted"},
		{name: "approve outside a review", stage: "plan.draft", action: "approve", code: 409, want: "not at a human review", to: "plan.draft"},
		{name: "reject with a message", stage: "implementation_review", action: "reject", form: url.Values{"message": {"the form needs labels"}}, code: 200, to: "security"},
		{name: "reject without a message", stage: "implementation_review", action: "reject", code: 409, want: "needs", to: "implementation_review"},
		{name: "resume what is not escalated", stage: "plan.draft", action: "resume", form: url.Values{"reason": {"fixed"}}, code: 409, want: "not escalated", to: "plan.draft"},
		{name: "skip", stage: "plan.draft", action: "skip", form: url.Values{"reason": {"no plan needed"}}, code: 200, to: "plan.review"},
		{name: "skip without a reason", stage: "plan.draft", action: "skip", code: 409, want: "needs a reason", to: "plan.draft"},
		{name: "abort", stage: "plan.draft", action: "abort", form: url.Values{"reason": {"duplicate"}}, code: 200, to: "not_doing"},
		{name: "move", stage: "plan.draft", action: "move", form: url.Values{"stage": {"security"}, "reason": {"reviewed elsewhere"}}, code: 200, to: "security"},
		{name: "move to no such stage", stage: "plan.draft", action: "move", form: url.Values{"stage": {"nowhere"}, "reason": {"x"}}, code: 409, want: "nowhere", to: "plan.draft"},
		{name: "no such action", stage: "plan.draft", action: "delete", code: 400, want: "there is no action", to: "plan.draft"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			iss := r.create(t, "Add login page", tt.stage)
			form := url.Values{"csrf": {r.csrf(t, iss.ID)}}
			for k, v := range tt.form {
				form[k] = v
			}
			code, body := r.post(t, "/issues/1/"+tt.action, form, map[string]string{"HX-Request": "true"})
			assert.Equal(t, tt.code, code, body)
			assert.Contains(t, body, tt.want)
			got, err := r.e.Store.Get(iss.ID)
			require.NoError(t, err)
			assert.Equal(t, tt.to, got.Stage)
		})
	}
}

// Hostile text from agents (a title, a reason, a CI log, a file name)
// is shown as text, never markup.
func TestHostileTextIsShownAsText(t *testing.T) {
	r := newRig(t)
	hostile := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	iss := r.create(t, "Fix "+hostile, "implementation_review")
	form := url.Values{"csrf": {r.csrf(t, iss.ID)}, "message": {"see " + hostile}}
	code, body := r.post(t, "/issues/1/reject", form, nil)
	require.Equal(t, http.StatusOK, code, body)
	// What the engine answers quotes the agent's text: a refusal naming a
	// stage of an agent's making, with a terminal's controls in it.
	form = url.Values{"csrf": {r.csrf(t, iss.ID)}, "stage": {"\x1b]0;pwned\x07\x1b[2J<i>nowhere</i>"}, "reason": {"x"}}
	code, body = r.post(t, "/issues/1/move", form, map[string]string{"HX-Request": "true"})
	require.Equal(t, http.StatusConflict, code, body)
	assert.Contains(t, body, "&lt;i&gt;nowhere", "the refusal, as text")
	assert.NotContains(t, body, "\x1b", "no terminal controls in an action's answer")
	require.NoError(t, os.MkdirAll(r.e.Store.Dir(iss.ID), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(r.e.Store.Dir(iss.ID), "ci_feedback.md"), []byte("FAIL "+hostile+"\n\x1b]0;title\x07done\n"), 0o644))

	for _, path := range []string{"/", "/issues/1"} {
		code, body := r.get(t, path)
		require.Equal(t, http.StatusOK, code)
		assert.NotContains(t, body, "<script>alert", path)
		assert.NotContains(t, body, "<img src=x", path)
		assert.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;", path)
	}
	_, body = r.get(t, "/issues/1")
	assert.Contains(t, body, "FAIL &lt;script&gt;", "the CI log's tail, as text")
	assert.NotContains(t, body, "\x1b", "no terminal controls")
}

type event struct{ id, kind, data string }

// readEvent reads the first event of the stream at u, sending last as
// Last-Event-ID when set.
func readEvent(t *testing.T, ctx context.Context, u, last string) event {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return event{}
	}
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return event{}
	}
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var ev event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" && ev.kind != "":
			return ev
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.kind = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data += strings.TrimPrefix(line, "data: ") + "\n"
		}
	}
	return ev
}

// The board listens on loopback unless the person opts in.
func TestListenIsLoopbackUnlessPublic(t *testing.T) {
	tests := []struct {
		addr   string
		public bool
		ok     bool
	}{
		{addr: "127.0.0.1:0", ok: true},
		{addr: "localhost:0", ok: true},
		{addr: "0.0.0.0:0"},
		{addr: ":0"},
		{addr: "192.0.2.1:0"},
		{addr: "no-port"},
		{addr: "0.0.0.0:0", public: true, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			ln, err := board.Listen(tt.addr, tt.public)
			if !tt.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			defer ln.Close()
			u, err := url.Parse(board.URL(ln, "abc"))
			require.NoError(t, err)
			assert.Equal(t, "abc", u.Query().Get("token"))
			assert.True(t, loopback.Host(u.Hostname()), u.String())
		})
	}
}
