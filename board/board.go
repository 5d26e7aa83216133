// Package board is agenttree's web board (docs/ARCHITECTURE.md §11): the
// pipeline as columns of stages with the issues in them, an issue's page,
// people's actions (approve, reject, resume, skip, abort, move) and live
// updates by server-sent events. It reads what the engine and the agents'
// sessions record and asks no forge; an action goes through the engine's
// entry points a person's command uses, as the person who started the
// board.
//
// Who may use it is whoever holds the login token the command prints in
// its URL (docs/ARCHITECTURE.md §11): it is checked on every request
// and never set as a cookie, and every action is a POST carrying a CSRF
// token bound to it, from the board's own origin.
package board

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/board/internal/live"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/internal/loopback"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static/*.js static/*.css static/*.LICENSE
var staticFiles embed.FS

// Server is one board: its login token, the secret its CSRF tokens are
// made with, and where it reads the engine from.
type Server struct {
	// Engine is the engine as of the current config (the controller's,
	// or one the board command reloads).
	Engine func() (*engine.Engine, error)
	// Actor is who the board's actions act as: the person who started it.
	Actor engine.Actor
	Log   *slog.Logger
	// Every is how often the state directory is looked at for changes.
	Every time.Duration
	// Public: the board answers whatever host name it is reached by (it
	// listens where the person opted in to with --public). Otherwise it
	// answers only requests addressed to the loopback address and port it
	// listens on, so a page whose name resolves to 127.0.0.1 (DNS
	// rebinding) is not the board's origin.
	Public bool
	// Metrics answers GET /metrics (the controller's numbers in the
	// Prometheus text format, behind the login token as every route);
	// nil: no such route.
	Metrics http.Handler

	token  string
	secret []byte
	tmpl   *template.Template
	hub    *live.Hub
	diffs  *diffStats
	limits limits
	// streams holds a place for each open event stream.
	streams chan struct{}
	// onRead, for tests, is called with a stream's path at each read.
	onRead func(path string)
}

// limits bound what a client may hold of the board: the time to send a
// request's headers and body, to take an answer (event streams excepted:
// each write of theirs has writeTimeout), and to keep an idle connection;
// and how many event streams may be open at once.
type limits struct {
	readHeader, read, write, idle time.Duration
	streams                       int
}

var defaultLimits = limits{readHeader: 10 * time.Second, read: 30 * time.Second, write: 30 * time.Second,
	idle: 2 * time.Minute, streams: 64}

// New is a board over load's engine, acting as actor, with a fresh login
// token and CSRF secret.
func New(load func() (*engine.Engine, error), actor engine.Actor, log *slog.Logger) (*Server, error) {
	if actor.Kind != engine.ActorHuman {
		return nil, errors.New("the board acts for a person: " + actor.String() + " cannot start it")
	}
	tmpl, err := template.New("board").Funcs(funcs).ParseFS(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{Engine: load, Actor: actor, Log: log, Every: 250 * time.Millisecond,
		token: randomHex(32), secret: []byte(randomHex(32)), tmpl: tmpl, diffs: newDiffStats()}
	s.setLimits(defaultLimits)
	s.hub = live.New()
	return s, nil
}

func (s *Server) setLimits(l limits) {
	s.limits = l
	s.streams = make(chan struct{}, l.streams)
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// Token is the login token the board's URL carries.
func (s *Server) Token() string { return s.token }

// csrf is the CSRF token of the board's forms: bound to the login token by
// the server's secret, so it is worth nothing to another board nor after a
// restart.
func (s *Server) csrf() string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("csrf\x00" + s.token))
	return hex.EncodeToString(m.Sum(nil))
}

// stopWait bounds how long the board's stop waits for the requests in
// flight, as the agents' socket does (controller/api): actions cancelled
// as it stops end through the engine, and are answered, within it.
const stopWait = 30 * time.Second

// Serve answers on ln until ctx is done, looking at the state directory
// for changes meanwhile. Once ctx is done it cancels the actions in
// flight and returns when they ended, within stopWait: the engine sees
// the cancellation, and no hook is left running in a board that stopped.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.handler(ctx), ReadHeaderTimeout: s.limits.readHeader, ReadTimeout: s.limits.read,
		WriteTimeout: s.limits.write, IdleTimeout: s.limits.idle, MaxHeaderBytes: maxHeaderBytes,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go s.hub.Watch(ctx, s.Engine, s.Every, s.Log)
	served, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
		case <-served:
			return
		}
		shut, cancel := context.WithTimeout(context.Background(), stopWait)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil {
			s.Log.Warn("the board stopped with requests still running", "waited", stopWait, "err", err)
			_ = srv.Close()
		}
	}()
	err := srv.Serve(ln)
	close(served)
	<-stopped
	if !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler is the board's routes, each behind the login token, actions
// behind the CSRF token and the origin check too.
func (s *Server) Handler() http.Handler { return s.handler(context.Background()) }

// handler is Handler with its actions cancelled once stop is done.
func (s *Server) handler(stop context.Context) http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.boardPage)
	mux.HandleFunc("GET /events", s.boardEvents)
	mux.HandleFunc("GET /issues/{id}", s.issuePage)
	mux.HandleFunc("GET /issues/{id}/events", s.issueEvents)
	mux.Handle("POST /issues/{id}/{action}", s.guardAction(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.action(stop, w, r)
	})))
	if s.Metrics != nil {
		mux.Handle("GET /metrics", s.Metrics)
	}
	return s.guard(mux)
}

// maxHeaderBytes bounds a request's headers; maxBody an action's form.
const (
	maxHeaderBytes = 32 << 10
	maxBody        = 64 << 10
)

// guard answers only a request addressed to the board (the Host check,
// unless Public), not fetched by another site's page (Fetch Metadata: a
// link followed to the board is fine, a script, frame, image or event
// stream is not), and carrying the login token in the query string or the
// X-Agenttree-Token header: 401 without one, 403 with another. Every
// answer says that nothing of it is to be cached, framed, sniffed or sent
// on as a referrer (the URL holds the token).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
			"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if !s.Public && !addressedHere(r) {
			http.Error(w, "refused: this request was addressed to "+strconv.Quote(r.Host)+", not to the board's loopback address; "+
				"open the URL `agenttree board` printed (a name that resolves to 127.0.0.1 is another site)", http.StatusMisdirectedRequest)
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); (site == "cross-site" || site == "same-site") &&
			!(r.Method == http.MethodGet && r.Header.Get("Sec-Fetch-Mode") == "navigate") {
			http.Error(w, "refused: another site's page asked for this; open the board's URL yourself", http.StatusForbidden)
			return
		}
		given := r.URL.Query().Get("token")
		if given == "" {
			given = r.Header.Get("X-Agenttree-Token")
		}
		switch {
		case given == "":
			http.Error(w, "this board needs its login token: open the URL `agenttree board` printed (…/?token=…)", http.StatusUnauthorized)
			return
		case subtle.ConstantTimeCompare([]byte(given), []byte(s.token)) != 1:
			http.Error(w, "this is not the board's login token: open the URL `agenttree board` printed when it started", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// guardAction refuses a POST from another origin (Sec-Fetch-Site, Origin)
// or without the board's CSRF token.
func (s *Server) guardAction(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := cop.Check(r); err != nil {
			http.Error(w, "refused: this action came from another site than the board", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if err := r.ParseForm(); err != nil {
			if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
				http.Error(w, fmt.Sprintf("refused: the form is over %d KiB; a reason or message that long belongs in a file the agent reads", maxBody>>10),
					http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "refused: the form cannot be read: "+report.Safe(err.Error()), http.StatusBadRequest)
			return
		}
		want := s.csrf()
		if got := r.PostFormValue("csrf"); subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			http.Error(w, "refused: the form's CSRF token is missing or not this board's; reload the page and try again", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// addressedHere reports whether r's Host is the loopback address and
// port the connection came in on, or localhost at that port: what a
// browser sends for the board's own URL, and not for a page of another
// name that resolves to 127.0.0.1.
func addressedHere(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	lhost, lport, err := net.SplitHostPort(local.String())
	if err != nil {
		return false
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		// No port: the scheme's, 80.
		host, port = strings.TrimSuffix(strings.TrimPrefix(r.Host, "["), "]"), "80"
	}
	if port != lport {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return loopback.Host(lhost)
	}
	ip, lip := net.ParseIP(host), net.ParseIP(lhost)
	return ip != nil && ip.IsLoopback() && ip.Equal(lip)
}
