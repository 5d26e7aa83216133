package board

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// keepAlive is how often an idle stream sends a comment, so proxies and
// browsers keep it open.
const keepAlive = 15 * time.Second

// coalesce is the least time between a stream's reads for changes: an
// agent that writes its CI log without pause has its page read and sent
// once a second, not at each of the hub's looks (docs/ARCHITECTURE.md
// §11).
const coalesce = time.Second

// stream sends server-sent events of kind until the client leaves: what
// read renders now, numbered with its id, and again at each change of the
// state directory that changes it (issue's page; 0: the board's). A
// client that reconnects gets the fragment at once whatever its
// Last-Event-ID: the id counts the issues' writes, not the rest a
// fragment shows (watch.yaml, the outbox, agents, panes, the rate limit),
// which may have changed meanwhile.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, kind string, issue int, read func() (id int, html string, err error)) {
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		w.Header().Set("Retry-After", "10")
		http.Error(w, fmt.Sprintf("the board has %d live pages open, as many as it serves; close some tabs", cap(s.streams)), http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	// A stream outlives the server's read and write timeouts: it reads
	// nothing more, and each write has writeTimeout of its own, so a
	// client that stops reading is let go.
	_ = rc.SetReadDeadline(time.Time{})
	send := func(text string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.limits.write))
		_, err := io.WriteString(w, text)
		return err == nil && rc.Flush() == nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if !send("") {
		return
	}
	at := s.hub.Open(issue)
	defer at.Close()
	sent, told := "", time.Time{}
	for {
		if s.onRead != nil {
			s.onRead(r.URL.Path)
		}
		id, html, err := read()
		switch {
		case err != nil:
			s.Log.Debug("the board could not read for an event", "err", err)
		case html != sent:
			if !send(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", id, kind, sseData(html))) {
				return
			}
			sent = html
		}
		select {
		case <-r.Context().Done():
			return
		case <-at.Changed():
			// The first change is read at once, those within the second
			// after it in one read at its end.
			if wait := time.Until(told.Add(coalesce)); wait > 0 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(wait):
				}
				select {
				case <-at.Changed(): // in the read to come
				default:
				}
			}
			told = time.Now()
		case <-time.After(keepAlive):
			if !send(": still here\n\n") {
				return
			}
		}
	}
}

// sseData is html as an event's data lines. A CR ends a line in an event
// stream as LF does, so each is one: a CR in an agent's text (escaped
// as markup, not as a line end) would otherwise start a field of its own
// (id:, event:, retry:) and cut the fragment.
func sseData(html string) string {
	html = strings.ReplaceAll(html, "\r\n", "\n")
	html = strings.ReplaceAll(html, "\r", "\n")
	return strings.ReplaceAll(html, "\n", "\ndata: ")
}

// boardEvents streams the board's columns, numbered by the sum of the
// issues' versions (boardView.Gen).
func (s *Server) boardEvents(w http.ResponseWriter, r *http.Request) {
	s.stream(w, r, "board", 0, func() (int, string, error) {
		v, err := s.readBoard(r)
		if err != nil {
			return 0, "", err
		}
		html, err := s.fragment("columns", v)
		return v.Gen, html, err
	})
}

// issueEvents streams an issue's page, numbered by its version: its event
// log's sequence.
func (s *Server) issueEvents(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.failed(w, err)
		return
	}
	s.stream(w, r, "issue", id, func() (int, string, error) {
		v, err := s.readIssue(r)
		if err != nil {
			return 0, "", err
		}
		html, err := s.fragment("issuebody", v)
		return v.Version, html, err
	})
}

// errUnknownAction says which actions there are.
func errUnknownAction(name string) error {
	return errors.New("there is no action " + strconv.Quote(name) + ": the board's are approve, reject, resume, skip, abort and move")
}

func itoa(n int) string { return strconv.Itoa(n) }
