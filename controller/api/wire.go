// Package api is the controller's socket API (docs/ARCHITECTURE.md §6, §10): agents of
// another OS user, or in a container, cannot write the state; their
// `next`, `issue create`, `issue show`, `status` and `inbox` are requests
// to the controller, which knows who asks from the kernel (SO_PEERCRED)
// and from the session token the agent was started with, and acts only on
// that session's issue in its role. HTTP and JSON over a Unix socket.
package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/stages"
)

// Routes, one per request kind.
const (
	RouteNext    = "/v1/next"
	RouteCreate  = "/v1/issues/create"
	RouteShow    = "/v1/issues/show"
	RouteStatus  = "/v1/status"
	RouteInbox   = "/v1/inbox"
	RouteSession = "/v1/sessions"
)

// MaxRequestBytes bounds a request body: every request is small.
const MaxRequestBytes = 64 << 10

// NextRequest moves the session's issue on. RequestID makes a retry of
// the same request (the controller restarted before it answered) return
// what the first one did instead of moving the issue twice.
type NextRequest struct {
	RequestID string `json:"request_id"`
	// Issue must be the session's when given.
	Issue  int  `json:"issue,omitempty"`
	DryRun bool `json:"dry_run,omitempty"`
	JSON   bool `json:"json,omitempty"`
}

// CreateRequest creates an issue, held to the config's agent_create rules.
type CreateRequest struct {
	RequestID string         `json:"request_id"`
	Title     string         `json:"title"`
	Flow      string         `json:"flow,omitempty"`
	Vars      map[string]any `json:"vars,omitempty"`
	Labels    []string       `json:"labels,omitempty"`
	JSON      bool           `json:"json,omitempty"`
}

// ShowRequest reads one issue (0: the session's).
type ShowRequest struct {
	Issue int  `json:"issue,omitempty"`
	JSON  bool `json:"json,omitempty"`
}

// StatusRequest reads the status of one issue (0: every issue).
type StatusRequest struct {
	Issue int  `json:"issue,omitempty"`
	Block bool `json:"block,omitempty"`
	JSON  bool `json:"json,omitempty"`
}

// InboxRequest reads the session issue's messages.
type InboxRequest struct {
	Recent int  `json:"recent,omitempty"`
	JSON   bool `json:"json,omitempty"`
}

// SessionRequest asks for a session token (people only).
type SessionRequest struct {
	Issue int         `json:"issue"`
	Role  stages.Role `json:"role"`
}

// Output is what a command prints and the code it exits with: what
// Client.Do makes of a typed result, and a session token's answer.
type Output struct {
	Text     string `json:"output"`
	ExitCode int    `json:"exit_code"`
}

// NextResult is the answer to a NextRequest: the engine's result, or, for
// a request the controller already carried out, what it did then.
type NextResult struct {
	Result *engine.Result `json:"result,omitempty"`
	Done   *Done          `json:"done,omitempty"`
}

// Done is a move a request already made (its id is in the issue's
// history), and where the issue is now.
type Done struct {
	Issue int         `json:"issue"`
	From  string      `json:"from"`
	To    string      `json:"to"`
	Kind  stages.Move `json:"kind"`
	Stage string      `json:"stage"`
}

// Response is every answer: a typed route's result, or the command's
// output, or an error with the exit code the CLI ends with.
type Response struct {
	Output
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// Decode reads one request body strictly: one JSON object of the route's
// type, no unknown fields, nothing after it, at most MaxRequestBytes.
func Decode(r io.Reader, v any) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxRequestBytes+1))
	if err != nil {
		return &unreadError{err}
	}
	if len(data) > MaxRequestBytes {
		return fmt.Errorf("request larger than %d bytes", MaxRequestBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad request: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("bad request: more than one JSON value")
	}
	return nil
}

// unreadError is a request body that did not arrive whole: the client
// hung up, or did not send it in time.
type unreadError struct{ err error }

func (e *unreadError) Error() string { return "reading the request: " + e.err.Error() }
func (e *unreadError) Unwrap() error { return e.err }
