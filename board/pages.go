package board

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/report"
)

// funcs are the templates' helpers. None of them returns template.HTML:
// everything the board shows of an issue is text, escaped where it lands.
var funcs = template.FuncMap{
	"issueTitle": issueTitle,
}

// page is what the layout template renders around a page's body.
type page struct {
	Title, Token, CSRF string
	// Body names the template of the page's body; Data is its data.
	Body string
	Data any
}

// render writes the template name with data, or a 500 saying what failed.
func (s *Server) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		s.Log.Error("the board could not render a page", "template", name, "err", err)
		http.Error(w, "the board could not render this page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fragment is the template name rendered into a string, for an event.
func (s *Server) fragment(name string, data any) (string, error) {
	var buf bytes.Buffer
	err := s.tmpl.ExecuteTemplate(&buf, name, data)
	return buf.String(), err
}

func (s *Server) boardPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.readBoard(r)
	if err != nil {
		s.failed(w, err)
		return
	}
	s.render(w, http.StatusOK, "layout", page{Title: "agenttree board", Token: s.token, CSRF: v.CSRF, Body: "board", Data: v})
}

func (s *Server) readBoard(r *http.Request) (boardView, error) {
	e, err := s.Engine()
	if err != nil {
		return boardView{}, err
	}
	v, err := readBoard(r.Context(), e, time.Now())
	v.Token, v.CSRF = s.token, s.csrf()
	for i := range v.NeedsYou {
		v.NeedsYou[i].Token, v.NeedsYou[i].CSRF = v.Token, v.CSRF
	}
	for _, c := range v.Columns {
		for i := range c.Cards {
			c.Cards[i].Token, c.Cards[i].CSRF = v.Token, v.CSRF
		}
	}
	return v, err
}

func (s *Server) issuePage(w http.ResponseWriter, r *http.Request) {
	v, err := s.readIssue(r)
	if err != nil {
		s.failed(w, err)
		return
	}
	s.render(w, http.StatusOK, "layout", page{Title: issueTitle(v.Card), Token: s.token, CSRF: v.CSRF, Body: "issue", Data: v})
}

func (s *Server) readIssue(r *http.Request) (issueView, error) {
	id, err := pathID(r)
	if err != nil {
		return issueView{}, err
	}
	e, err := s.Engine()
	if err != nil {
		return issueView{}, err
	}
	v, err := readIssue(r.Context(), e, id, time.Now())
	v.Token, v.CSRF = s.token, s.csrf()
	if err == nil && v.PRNumber != 0 {
		if d, ok := s.diffs.of(r.Context(), e.WorkDir, v.Branch, cmp.Or(e.Config.DefaultBranch, "main")); ok {
			v.Diff = &d
		}
	}
	return v, err
}

// badRequest is an error in what the request asked.
type badRequest struct{ error }

// pathID is the issue id of the request's path.
func pathID(r *http.Request) (int, error) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id <= 0 {
		return 0, badRequest{fmt.Errorf("%q is not an issue id (a number, e.g. /issues/3)", r.PathValue("id"))}
	}
	return id, nil
}

// failed answers err: 404 for an issue that is not there, 400 for a bad
// request, else 500; as text, never markup.
func (s *Server) failed(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var bad badRequest
	switch {
	case errors.As(err, &bad):
		status = http.StatusBadRequest
	case errors.Is(err, issues.ErrNotFound):
		status = http.StatusNotFound
	}
	s.render(w, status, "layout", page{Title: "agenttree board", Token: s.token, Body: "error", Data: strings.TrimSpace(report.Safe(err.Error()))})
}
