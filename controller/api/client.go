package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Client sends an agent's requests to the controller.
type Client struct {
	Socket string
	Token  string
	// Wait bounds how long a request waits for a controller that does not
	// answer (one restarting): the request is sent again, with the same
	// request id, until then.
	Wait time.Duration
	http *http.Client
}

// Unavailable says no controller answered in time.
type Unavailable struct {
	Socket string
	Err    error
}

func (e *Unavailable) Error() string {
	return fmt.Sprintf("no controller answers on %s (%v); agents in this repository act through it: a person starts it with `agenttree controller` in the repository's main checkout", e.Socket, e.Err)
}

func (e *Unavailable) Unwrap() error { return e.Err }

// NewClient talks to the controller listening at socket.
func NewClient(socket, token string) *Client {
	c := &Client{Socket: socket, Token: token, Wait: 30 * time.Second}
	c.http = &http.Client{Transport: &http.Transport{
		DialContext:       func(ctx context.Context, _, _ string) (net.Conn, error) { return Dial(ctx, socket) },
		DisableKeepAlives: true,
	}}
	return c
}

// RequestID makes a request id: what lets a retry be recognised.
func RequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Do sends req to route and returns the command's output, a typed
// route's result rendered as the CLI prints it (render). A controller
// that cannot be reached, or hangs up before answering, is asked again
// until Wait is over: every request kind is safe to send twice (reads
// change nothing; a move or a creation carries a request id the
// controller recognises). A refusal is an *Error.
func (c *Client) Do(ctx context.Context, route string, req any) (Output, error) {
	return c.do(ctx, route, req, func(resp *Response) (Output, error) { return render(route, req, resp) })
}

// Result sends req to route, as Do does, and decodes the route's typed
// result into v, for the caller to print: the routes whose printer lives
// above this package (status, cmd/agenttree/statuscmd).
func (c *Client) Result(ctx context.Context, route string, req, v any) error {
	_, err := c.do(ctx, route, req, func(resp *Response) (Output, error) { return Output{}, decodeResult(route, resp, v) })
	return err
}

// do sends req to route until the controller answers, and hands a
// successful answer to answered.
func (c *Client) do(ctx context.Context, route string, req any, answered func(*Response) (Output, error)) (Output, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Output{}, err
	}
	start := time.Now()
	deadline := start.Add(c.Wait)
	b := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(100*time.Millisecond),
		backoff.WithMultiplier(2),
		backoff.WithMaxInterval(time.Second),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0), // until's deadline, which may shrink
	)
	replied := false // the controller answered: no more tries
	out, err := backoff.RetryWithData(func() (Output, error) {
		resp, err := c.send(ctx, route, body)
		replied = err == nil
		switch {
		case err == nil && resp.Error != "":
			return resp.Output, backoff.Permanent(&Error{Message: resp.Error, ExitCode: resp.ExitCode})
		case err == nil:
			out, err := answered(resp)
			if err != nil {
				return Output{}, backoff.Permanent(err)
			}
			return out, nil
		case ctx.Err() != nil:
			return Output{}, backoff.Permanent(ctx.Err())
		case errors.Is(err, fs.ErrNotExist):
			// No socket: no controller runs (one that stops removes it).
			// A second covers a restart replacing it.
			if soon := start.Add(time.Second); soon.Before(deadline) {
				deadline = soon
			}
		}
		return Output{}, err
	}, backoff.WithContext(until{BackOff: b, deadline: &deadline}, ctx))
	switch {
	case err == nil, replied:
		return out, err
	case ctx.Err() != nil:
		return Output{}, ctx.Err()
	}
	return Output{}, &Unavailable{Socket: c.Socket, Err: err}
}

// until stops a backoff once the deadline is past: asked after a failed
// attempt, it lets one more attempt start until then, however long the
// wait before it.
type until struct {
	backoff.BackOff
	deadline *time.Time
}

func (u until) NextBackOff() time.Duration {
	if time.Now().After(*u.deadline) {
		return backoff.Stop
	}
	return u.BackOff.NextBackOff()
}

func (c *Client) send(ctx context.Context, route string, body []byte) (*Response, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://agenttree"+route, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		r.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.http.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out Response
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		// Cut off mid-answer (the controller died): ask again.
		return nil, fmt.Errorf("reading the controller's answer: %w", err)
	}
	return &out, nil
}

// Dial connects to the controller's socket at path, however deep in the
// file system it is (see reachable).
func Dial(ctx context.Context, path string) (net.Conn, error) {
	addr, release, err := reachable(path)
	if err != nil {
		return nil, err
	}
	defer release()
	var d net.Dialer
	return d.DialContext(ctx, "unix", addr)
}
