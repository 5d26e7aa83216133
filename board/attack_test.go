package board_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/board"
	"github.com/agenttree/agenttree/engine/issues"
)

// serve serves r's board on a loopback listener of its own (the real
// http.Server, with its timeouts) and returns its base URL.
func (r *rig) serve(t *testing.T) string {
	t.Helper()
	ln, err := board.Listen("127.0.0.1:0", false)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	r.srv.Every = 20 * time.Millisecond
	go func() { defer close(done); _ = r.srv.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String()
}

// do sends a GET (or method) of path with the login token and header,
// Host set to host when given, and returns the answer with its body read.
func (r *rig) do(t *testing.T, method, path, host string, header map[string]string) (*http.Response, string) {
	t.Helper()
	// A stream the board should not have opened ends the read, not the test.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, r.url(path), nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, string(body)
}

// A page of another name that resolves to 127.0.0.1 (DNS rebinding) is
// not the board: with the token or not, the board answers only requests
// addressed to its own loopback address and port, unless --public.
func TestOnlyRequestsAddressedToTheBoardAreAnswered(t *testing.T) {
	r := newRig(t)
	r.create(t, "Add login page", "implementation_review")
	port := r.ts.Listener.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name, host, path string
		public           bool
		want             int
	}{
		{name: "its own address", host: fmt.Sprintf("127.0.0.1:%d", port), path: "/", want: http.StatusOK},
		{name: "localhost at its port", host: fmt.Sprintf("localhost:%d", port), path: "/issues/1", want: http.StatusOK},
		{name: "a rebound name", host: fmt.Sprintf("evil.example:%d", port), path: "/", want: http.StatusMisdirectedRequest},
		{name: "a rebound name's event stream", host: fmt.Sprintf("evil.example:%d", port), path: "/events", want: http.StatusMisdirectedRequest},
		{name: "a rebound name's script", host: fmt.Sprintf("evil.example:%d", port), path: "/static/htmx.min.js", want: http.StatusMisdirectedRequest},
		{name: "another port", host: fmt.Sprintf("127.0.0.1:%d", port+1), path: "/", want: http.StatusMisdirectedRequest},
		{name: "another loopback address", host: fmt.Sprintf("127.0.0.2:%d", port), path: "/", want: http.StatusMisdirectedRequest},
		{name: "no port", host: "127.0.0.1", path: "/", want: http.StatusMisdirectedRequest},
		{name: "any name when public", host: fmt.Sprintf("board.example:%d", port), path: "/", public: true, want: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.srv.Public = tt.public
			resp, body := r.do(t, http.MethodGet, tt.path, tt.host, nil)
			assert.Equal(t, tt.want, resp.StatusCode, body)
			if tt.want != http.StatusOK {
				assert.NotContains(t, body, r.srv.Token())
			}
		})
	}
	r.srv.Public = false
	form := url.Values{"csrf": {r.csrf(t, 1)}}
	req, err := http.NewRequest(http.MethodPost, r.url("/issues/1/approve"), strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Host = fmt.Sprintf("evil.example:%d", port)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)
	got, err := r.e.Store.Get(1)
	require.NoError(t, err)
	assert.Equal(t, "implementation_review", got.Stage, "a rebound page's action does nothing")
}

// Another site's page (another port of localhost is the same site) can
// have the browser follow a link to the board, nothing more: no script,
// frame, image or event stream of it is answered, and no answer allows
// another origin to read it (no CORS).
func TestAnotherSitesPageGetsNothing(t *testing.T) {
	r := newRig(t)
	r.create(t, "Add login page", "implementation_review")
	tests := []struct {
		name, method, path, site, mode string
		want                           int
	}{
		{name: "a link followed from another site", method: "GET", path: "/", site: "cross-site", mode: "navigate", want: http.StatusOK},
		{name: "the board's own script", method: "GET", path: "/static/htmx.min.js", site: "same-origin", mode: "no-cors", want: http.StatusOK},
		{name: "its own event stream", method: "GET", path: "/events", site: "same-origin", mode: "cors", want: http.StatusOK},
		{name: "typed in the address bar", method: "GET", path: "/issues/1", site: "none", mode: "navigate", want: http.StatusOK},
		{name: "fetch from another port of localhost", method: "GET", path: "/", site: "same-site", mode: "cors", want: http.StatusForbidden},
		{name: "an EventSource of another site", method: "GET", path: "/events", site: "cross-site", mode: "cors", want: http.StatusForbidden},
		{name: "an issue's events from another port", method: "GET", path: "/issues/1/events", site: "same-site", mode: "cors", want: http.StatusForbidden},
		{name: "a script tag of another site", method: "GET", path: "/static/htmx.min.js", site: "cross-site", mode: "no-cors", want: http.StatusForbidden},
		{name: "a frame of another site", method: "GET", path: "/", site: "cross-site", mode: "nested-navigate", want: http.StatusForbidden},
		{name: "a preflight", method: "OPTIONS", path: "/issues/1/approve", site: "cross-site", mode: "cors", want: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, tt.method, r.url(tt.path), nil)
			require.NoError(t, err)
			req.Header.Set("Sec-Fetch-Site", tt.site)
			req.Header.Set("Sec-Fetch-Mode", tt.mode)
			req.Header.Set("Origin", "http://127.0.0.1:3000")
			req.Header.Set("Access-Control-Request-Method", "POST")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tt.want, resp.StatusCode)
			for k := range resp.Header {
				assert.NotContains(t, strings.ToLower(k), "access-control-", "no answer lets another origin read it")
			}
		})
	}
}

// An action's form is bounded: a larger one is refused as too large,
// and does nothing.
func TestAnOversizedFormIsRefused(t *testing.T) {
	r := newRig(t)
	iss := r.create(t, "Add login page", "implementation_review")
	form := url.Values{"csrf": {r.csrf(t, iss.ID)}, "message": {strings.Repeat("x", 100<<10)}}
	code, body := r.post(t, "/issues/1/reject", form, nil)
	assert.Equal(t, http.StatusRequestEntityTooLarge, code, body)
	assert.Contains(t, body, "KiB")
	got, err := r.e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, iss.Version, got.Version)
}

// The event streams open at once are bounded; one closed makes room.
func TestEventStreamsAreBounded(t *testing.T) {
	r := newRig(t)
	r.create(t, "Add login page", "implementation_review")
	board.SetLimits(r.srv, time.Second, 5*time.Second, 5*time.Second, 5*time.Second, 2)
	base := r.serve(t)
	open := func(ctx context.Context) *http.Response {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events?token="+r.srv.Token(), nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	ctx1, close1 := context.WithCancel(context.Background())
	defer close1()
	first, second := open(ctx1), open(context.Background())
	defer second.Body.Close()
	require.Equal(t, http.StatusOK, first.StatusCode)
	require.Equal(t, http.StatusOK, second.StatusCode)
	ctx3, cancel3 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel3()
	third := open(ctx3)
	body, _ := io.ReadAll(third.Body)
	third.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, third.StatusCode, string(body))
	assert.NotEmpty(t, third.Header.Get("Retry-After"))
	close1()
	first.Body.Close()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp := open(ctx)
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 50*time.Millisecond, "a closed stream's place is taken again")
}

// A client that sends its request slowly is let go; an event stream
// stays open past every timeout and still gets the next change.
func TestSlowClientsAreLetGoButStreamsStayOpen(t *testing.T) {
	r := newRig(t)
	r.create(t, "Add login page", "implementation_review")
	board.SetLimits(r.srv, 300*time.Millisecond, 500*time.Millisecond, 500*time.Millisecond, 500*time.Millisecond, 8)
	base := r.serve(t)
	addr := strings.TrimPrefix(base, "http://")

	slow := []struct{ name, sent string }{
		{name: "headers never finished", sent: "GET /?token=" + r.srv.Token() + " HTTP/1.1\r\nHost: " + addr + "\r\n"},
		{name: "a body never sent", sent: "POST /issues/1/approve?token=" + r.srv.Token() + " HTTP/1.1\r\nHost: " + addr +
			"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ncsrf="},
		{name: "an idle connection", sent: ""},
	}
	for _, tt := range slow {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer conn.Close()
			_, err = io.WriteString(conn, tt.sent)
			require.NoError(t, err)
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
			start := time.Now()
			_, _ = io.Copy(io.Discard, conn) // until the board closes it
			assert.Less(t, time.Since(start), 15*time.Second, "the board let the slow client go")
		})
	}

	events := make(chan event, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events?token="+r.srv.Token(), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		readEvents(resp.Body, events)
	}()
	select {
	case <-events:
	case <-time.After(20 * time.Second):
		t.Fatal("no first event")
	}
	time.Sleep(1500 * time.Millisecond) // past the read, write and idle timeouts
	r.create(t, "Second issue", "backlog")
	// The create writes more than one file: an event may come between.
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if strings.Contains(ev.data, "Second issue") {
				return
			}
		case <-deadline:
			t.Fatal("the stream was cut by the server's timeouts: no event of the second issue")
		}
	}
}

// readEvents sends each event read from body on out, a CR, LF or CRLF
// ending a line as in a browser's EventSource.
func readEvents(body io.Reader, out chan<- event) {
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
			if data[i] == '\r' {
				if i+1 == len(data) && !atEOF {
					return 0, nil, nil
				}
				if i+1 < len(data) && data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
			}
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	var ev event
	for sc.Scan() {
		line := sc.Text()
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			if ev.kind != "" {
				out <- ev
			}
			ev = event{}
		case field == "id":
			ev.id = value
		case field == "event":
			ev.kind = value
		case field == "data":
			ev.data += value + "\n"
		}
	}
}

// A CR in what an event carries cannot start a field of its own in the
// stream (an id, an event name) nor cut the fragment, as a browser reads
// it.
func TestAnEventsTextCannotForgeStreamFields(t *testing.T) {
	r := newRig(t)
	iss := r.create(t, "Add login page", "plan.draft")
	hostile := "plan.draft\rid: 999\revent: forged\rdata: <b>x</b>"
	_, err := r.e.Store.Update(context.Background(), iss.ID, iss.Version, func(i *issues.Issue) error {
		i.Stage = hostile
		return nil
	})
	require.NoError(t, err)
	base := r.serve(t)
	events := make(chan event, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, path := range []string{"/events", "/issues/1/events"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path+"?token="+r.srv.Token(), nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		go readEvents(resp.Body, events)
		select {
		case ev := <-events:
			assert.Equal(t, "2", ev.id, "%s: the event's own id", path)
			assert.Contains(t, []string{"board", "issue"}, ev.kind, path)
			assert.NotContains(t, ev.data, "<b>", path)
			assert.Contains(t, ev.data, "</section>", "%s: the whole fragment", path)
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no event", path)
		}
	}
}

// The login token is in nothing the board answers to a request without
// it, nor in its log, and a redirect never leaves the board's origin.
func TestTheTokenDoesNotLeak(t *testing.T) {
	var logged bytes.Buffer
	r := newRig(t)
	iss := r.create(t, "Add login page", "implementation_review")
	r.srv.Log = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	base := r.serve(t)
	token := r.srv.Token()

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/", "/issues/1", "/events", "/issues/1/approve", "/static/htmx.min.js", "/nope"} {
		for _, q := range []string{"", "?token=wrong", "?token=" + token[:len(token)-1]} {
			resp, err := noRedirect.Get(base + path + q)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.NotContains(t, string(body), token, path+q)
			assert.NotContains(t, fmt.Sprint(resp.Header), token, path+q)
		}
	}
	// With the token: what the board redirects stays on the board.
	for _, path := range []string{"/static", "/static//evil.example/x", "//evil.example/", "/static/../issues/1", "/issues/1/../../"} {
		req, err := http.NewRequest(http.MethodGet, base+"/", nil)
		require.NoError(t, err)
		req.URL.Path, req.URL.RawQuery = path, "token="+token
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); loc != "" {
			u, err := url.Parse(loc)
			require.NoError(t, err)
			assert.Empty(t, u.Host, "%s redirected to another host: %s", path, loc)
			assert.False(t, strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, `/\`), "%s: %s", path, loc)
		}
	}
	form := url.Values{"csrf": {r.csrf(t, iss.ID)}}
	code, body := r.post(t, "/issues/1/move", form, nil) // refused: no stage
	require.Equal(t, http.StatusConflict, code, body)
	code, body = r.post(t, "/issues/1/approve", form, nil)
	require.Equal(t, http.StatusOK, code, body)
	assert.NotEmpty(t, logged.String())
	assert.NotContains(t, logged.String(), token, "the log never holds the token")
	assert.NotContains(t, logged.String(), r.csrf(t, iss.ID), "nor the CSRF token")
}
