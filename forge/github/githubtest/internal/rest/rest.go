// Package rest is how the fake GitHub server answers over HTTP as GitHub's
// REST API does: JSON bodies, GitHub's error bodies and 422s, pages of 30
// (per_page at most 100), RFC 3339 timestamps. It holds none of the
// fake's repository state, so the handlers that do read as what they
// answer, not how.
package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
)

// Reply is what a handler answers; Write turns it into HTTP.
type Reply struct {
	Status      int
	Body        any    // JSON-encoded unless Raw is set
	Raw         []byte // sent as is with ContentType
	ContentType string
	// Location, when set, makes the reply a redirect to it.
	Location string
}

// JSON is a reply of status with body as JSON.
func JSON(status int, body any) Reply { return Reply{Status: status, Body: body} }

// Error is GitHub's error body for status, saying msg.
func Error(status int, msg string) Reply { return JSON(status, edge.ErrorBody(status, msg)) }

// NotFound is GitHub's 404.
func NotFound() Reply { return Error(http.StatusNotFound, "Not Found") }

// Validation is GitHub's 422 for a request whose field is wrong.
func Validation(resource, field, code string) Reply {
	return JSON(http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed",
		"errors":  []map[string]any{{"resource": resource, "field": field, "code": code}},
	})
}

// Write sends rep.
func (rep Reply) Write(w http.ResponseWriter) {
	if rep.Location != "" {
		w.Header().Set("Location", rep.Location)
		w.WriteHeader(rep.Status)
		return
	}
	body, ctype := rep.encode()
	if ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	w.WriteHeader(rep.Status)
	if rep.Status != http.StatusNoContent {
		_, _ = w.Write(body)
	}
}

// encode is the reply's body and content type: Raw as it is, else Body
// as JSON.
func (rep Reply) encode() ([]byte, string) {
	if rep.Raw != nil || rep.Body == nil {
		return rep.Raw, rep.ContentType
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(rep.Body)
	return buf.Bytes(), "application/json; charset=utf-8"
}

// Decode reads a request's JSON body into v, or answers why it cannot.
func Decode(r *http.Request, v any) *Reply {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		rep := Error(http.StatusBadRequest, "Problems parsing JSON")
		return &rep
	}
	return nil
}

// Page renders the page of items that the request's page and per_page
// ask for (30 a page unless told, 100 at most), as GitHub paginates.
func Page[T any](r *http.Request, items []T, render func(T) map[string]any) []map[string]any {
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per < 1 {
		per = 30
	}
	per = min(per, 100)
	start := min((max(n, 1)-1)*per, len(items))
	out := []map[string]any{}
	for _, it := range items[start:min(start+per, len(items))] {
		out = append(out, render(it))
	}
	return out
}

// Base is the server's own URL as the client reached it.
func Base(r *http.Request) string { return "http://" + r.Host }

// Time is GitHub's timestamp: RFC 3339 in UTC, null for none.
func Time(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// PathID is the numeric id the path's key holds; 0 when it holds none.
func PathID(r *http.Request, key string) int64 {
	id, _ := strconv.ParseInt(r.PathValue(key), 10, 64)
	return id
}
