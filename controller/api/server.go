package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/internal/identity"
	"github.com/agenttree/agenttree/sessions/tokens"
)

// Caller is who sent a request, as the kernel and the token say.
type Caller struct {
	UID, PID int
	// Person: the state directory's owner (or root) outside a container.
	Person bool
	// Session is the token's session; nil for a person without one.
	Session *tokens.Session
}

// Handlers do what the requests ask; the server has checked who asks.
// They answer with typed results, which the agent's CLI renders as a
// person's does: Next, Create, Show and Inbox in Client.Do (Agents is the
// controller's), Status, whose rows and printer are the CLI's
// (cmd/agenttree/statuscmd), through Client.Result.
type Handlers struct {
	Next   func(context.Context, Caller, NextRequest) (*NextResult, error)
	Create func(context.Context, Caller, CreateRequest) (*issues.Issue, error)
	Show   func(context.Context, Caller, ShowRequest) (*report.Shown, error)
	Status func(context.Context, Caller, StatusRequest) (any, error)
	Inbox  func(context.Context, Caller, InboxRequest) (*report.Inbox, error)
}

// Server answers the agents' requests on the state directory's socket.
type Server struct {
	Sessions *tokens.Store
	// Owner is the uid owning the state directory: a person.
	Owner    int
	Handlers Handlers
	// ExitCode is the CLI's exit code for a handler's error.
	ExitCode func(error) int
	Log      *slog.Logger
	// Limits bound the connections and how long a request and its answer
	// may take; zero fields are DefaultLimits'.
	Limits Limits
}

// Error is a refusal or failure, with the exit code the CLI ends with.
type Error struct {
	Message  string
	ExitCode int
}

func (e *Error) Error() string { return e.Message }

// Refused makes an Error of a refusal.
func Refused(code int, format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...), ExitCode: code}
}

type peerKey struct{}

type peer struct {
	proc identity.Process
	pid  int
	err  error
}

// Listen listens on the socket at path, replacing a socket left by a
// controller that died. Anyone may connect: who they are is checked per
// request.
func Listen(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket; remove it", path)
		}
		_ = os.Remove(path) // the caller holds the controller lock: it is stale
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	addr, release, err := reachable(path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	ln, err := net.Listen("unix", addr)
	if err != nil {
		release()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		release()
		return nil, err
	}
	made, err := os.Lstat(path)
	if err != nil {
		ln.Close()
		release()
		return nil, err
	}
	// The socket is removed at Close only while the path still names it:
	// a controller of this host whose term ended (docs/ARCHITECTURE.md §8)
	// stops after the one elected next has made its own socket there.
	if u, ok := ln.(*net.UnixListener); ok {
		u.SetUnlinkOnClose(false)
	}
	return &owned{Listener: ln, path: path, made: made, release: release}, nil
}

// owned is a listener bound on path (through its directory's descriptor
// when path is too long, which stays open until Close), which removes
// the socket at Close if path still names the one it made.
type owned struct {
	net.Listener
	path    string
	made    os.FileInfo
	release func()
}

func (l *owned) Close() error {
	err := l.Listener.Close()
	if now, serr := os.Lstat(l.path); serr == nil && os.SameFile(now, l.made) {
		_ = os.Remove(l.path)
	}
	l.release()
	return err
}

var errNotUnix = errors.New("not a Unix socket connection")

// Serve answers requests on ln until ctx is done, within s.Limits;
// requests in flight are finished, with a bounded wait.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	limits := s.Limits.withDefaults()
	srv := &http.Server{
		Handler: s.mux(limits.Reply),
		// A request's headers and body arrive within limits.Request of its
		// first byte; once the body is read there is no read deadline
		// (net/http clears it), so the work takes what it takes. The write
		// deadline is set per request, once the work is done (route):
		// http.Server's WriteTimeout would run from the request's start and
		// cut off a `next` whose gates take minutes.
		ReadHeaderTimeout: limits.Request,
		ReadTimeout:       limits.Request,
		// Every client sends one request per connection, so keep-alives
		// are off (below) and a connection is closed once answered; were
		// they on, an idle one would be closed after this.
		IdleTimeout: limits.Request,
		// Requests carry a few short headers (a session token); a bound
		// well below net/http's 1 MiB default keeps what each of the
		// connections a peer may hold costs small. Bodies are bounded by
		// Decode (MaxRequestBytes).
		MaxHeaderBytes: 8 << 10,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			p := peer{err: errNotUnix}
			if pc, ok := c.(*peerConn); ok {
				p = pc.peer
			}
			return context.WithValue(ctx, peerKey{}, p)
		},
		ErrorLog: slog.NewLogLogger(s.log().Handler(), slog.LevelWarn),
	}
	srv.SetKeepAlivesEnabled(false)
	done, shutDown := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(shutDown)
		select {
		case <-ctx.Done():
			shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := srv.Shutdown(shutdown); err != nil {
				s.log().Warn("agents' requests still in flight after 30 s were cut off", "err", err)
			}
		case <-done:
		}
	}()
	err := srv.Serve(newLimitListener(ln, limits, s.Owner, s.log()))
	close(done)
	// Serve returns as the stop begins; the requests in flight are
	// answered (or cut off after 30 s) before the controller goes on.
	<-shutDown
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *Server) mux(replyWithin time.Duration) *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("POST "+RouteNext, route(s, replyWithin, s.Handlers.Next))
	m.HandleFunc("POST "+RouteCreate, route(s, replyWithin, s.Handlers.Create))
	m.HandleFunc("POST "+RouteShow, route(s, replyWithin, s.Handlers.Show))
	m.HandleFunc("POST "+RouteStatus, route(s, replyWithin, s.Handlers.Status))
	m.HandleFunc("POST "+RouteInbox, route(s, replyWithin, s.Handlers.Inbox))
	m.HandleFunc("POST "+RouteSession, route(s, replyWithin, s.mint))
	return m
}

// route decodes a request of type R, works out its caller and hands both
// to h, answering with its result of type T. The answer is written within
// replyWithin of the work's end: a client that does not read it gives its
// connection up then.
func route[R, T any](s *Server, replyWithin time.Duration, h func(context.Context, Caller, R) (T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		answerAs := func(logAs slog.Level, out any, err error) {
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(replyWithin))
			s.reply(w, r, out, err, logAs)
		}
		answer := func(out any, err error) { answerAs(slog.LevelInfo, out, err) }
		caller, err := s.caller(r)
		if err != nil {
			answer(nil, err)
			return
		}
		var req R
		if err := Decode(r.Body, &req); err != nil {
			// A body that did not come is logged at debug only: a flood's
			// slow connections would each make a line when cut off (the
			// limits log the peer).
			logAs := slog.LevelInfo
			if unread := (*unreadError)(nil); errors.As(err, &unread) {
				logAs = slog.LevelDebug
			}
			answerAs(logAs, nil, Refused(2, "%s", err))
			return
		}
		if h == nil {
			answer(nil, Refused(2, "this controller does not answer %s", r.URL.Path))
			return
		}
		// The request's work is finished even if the agent hangs up: a
		// half-done move helps nobody.
		res, err := h(context.WithoutCancel(r.Context()), caller, req)
		answer(res, err)
	}
}

// caller is who sent r: a person by what the kernel says of the
// connection, anyone else by the session their token names.
func (s *Server) caller(r *http.Request) (Caller, error) {
	p, _ := r.Context().Value(peerKey{}).(peer)
	if p.err != nil {
		return Caller{}, Refused(2, "who is asking cannot be told (%v); requests come over the state directory's Unix socket", p.err)
	}
	c := Caller{UID: p.proc.UID, PID: p.pid, Person: p.proc.Person(s.Owner)}
	token, hasToken := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !hasToken || token == "" {
		if c.Person {
			return c, nil
		}
		return Caller{}, Refused(2, "this agent has no session token (AGENTTREE_TOKEN): agents started with `agenttree start` have one; a person makes one with `agenttree token ISSUE --role ROLE`")
	}
	sess, err := s.Sessions.Lookup(token)
	if errors.Is(err, tokens.ErrUnknown) {
		return Caller{}, Refused(2, "the session token (AGENTTREE_TOKEN) is not one this controller gave, or it was revoked; a person makes one with `agenttree token ISSUE --role ROLE`")
	}
	if err != nil {
		return Caller{}, err
	}
	// A token acts only for the session it was given to: a process of
	// its pane's tree, told by the kernel's pid of the peer, whatever
	// mount namespace the peer says it is in (any user can make one of
	// its own). Another session's agent of the same OS user that read it
	// acts as nobody. A container session's processes are no host
	// process's descendants: the token file mounted into that container
	// alone binds them (Session.Container).
	if err := sess.Admits(p.pid); err != nil {
		return Caller{}, Refused(2, "%s; every agent session has a token of its own (its AGENTTREE_TOKEN_FILE)", err)
	}
	c.Session = sess
	// A token lowers a person to the session's agent: people try things
	// as agents.
	c.Person = false
	return c, nil
}

// mint gives a person a session token: the output is the token.
func (s *Server) mint(_ context.Context, c Caller, req SessionRequest) (Output, error) {
	if !c.Person {
		return Output{}, Refused(3, "only a person makes session tokens")
	}
	token, err := s.Sessions.Mint(req.Issue, req.Role)
	if err != nil {
		return Output{}, Refused(2, "%s", err)
	}
	return Output{Text: token}, nil
}

// reply writes out, an Output or a typed result (nil: none), or err.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, out any, err error, logAs slog.Level) {
	var resp Response
	switch out := out.(type) {
	case nil:
	case Output:
		resp.Output = out
	default:
		if err != nil {
			break // a typed route's result is nil with an error
		}
		var merr error
		if resp.Result, merr = json.Marshal(out); merr != nil {
			err = fmt.Errorf("encode the answer: %w", merr)
		}
	}
	status := http.StatusOK
	if err != nil {
		resp.Result = nil
		resp.Error = err.Error()
		var ae *Error
		switch {
		case errors.As(err, &ae):
			resp.ExitCode = ae.ExitCode
		case s.ExitCode != nil:
			resp.ExitCode = s.ExitCode(err)
		default:
			resp.ExitCode = 1
		}
		status = http.StatusUnprocessableEntity
		s.log().Log(r.Context(), logAs, "request refused", "path", r.URL.Path, "err", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
