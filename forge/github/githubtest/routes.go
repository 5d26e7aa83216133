package githubtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/gql"
)

// reply is what a handler answers; write turns it into HTTP.
type reply struct {
	status      int
	body        any    // JSON-encoded unless raw is set
	raw         []byte // sent as is with contentType
	contentType string
	location    string
}

func jsonReply(status int, body any) reply { return reply{status: status, body: body} }

func errReply(status int, msg string) reply { return jsonReply(status, edge.ErrorBody(status, msg)) }

func notFound() reply { return errReply(http.StatusNotFound, "Not Found") }

// validation is GitHub's 422 for a request whose field is wrong.
func validation(resource, field, code string) reply {
	return jsonReply(http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed",
		"errors":  []map[string]any{{"resource": resource, "field": field, "code": code}},
	})
}

// A handler answers one endpoint with the server's lock held.
type handler func(r *http.Request) reply

// A repoHandler answers an endpoint under /repos/{owner}/{repo}.
type repoHandler func(r *http.Request, repo *Repo) reply

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(rt edge.Route, h handler) { mux.Handle(rt.Endpoint, s.Edge.Wrap(rt, s.answer(h))) }
	for endpoint, h := range map[string]repoHandler{
		EndpointRepo:          s.getRepo,
		EndpointListPulls:     s.listPulls,
		EndpointCreatePull:    s.createPull,
		EndpointGetPull:       onPull("pull_number", s.getPull),
		EndpointUpdatePull:    onPull("pull_number", s.updatePull),
		EndpointMergePull:     onPull("pull_number", s.mergePull),
		EndpointCheckRuns:     s.listCheckRuns,
		EndpointStatus:        s.combinedStatus,
		EndpointRerequest:     s.rerequestCheckRun,
		EndpointRerunJob:      s.rerunJob,
		EndpointJobLogs:       s.jobLogs,
		EndpointAddLabels:     onPull("issue_number", s.addLabels),
		EndpointCreateComment: onPull("issue_number", s.createComment),
		EndpointListComments:  onPull("issue_number", s.listComments),
		EndpointListReviews:   onPull("pull_number", s.listReviews),
		EndpointDeleteRef:     s.deleteRef,
	} {
		handle(edge.Route{Endpoint: endpoint}, s.inRepo(h))
	}
	handle(edge.Route{Endpoint: EndpointGraphQL, Resource: edge.GraphQL, Kind: gql.OperationName}, s.graphql)
	// Log downloads redirect here, like GitHub's signed blob URLs: no
	// token needed and no rate limit.
	handle(edge.Route{Endpoint: EndpointLogBlob, Public: true}, s.logBlob)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { notFound().write(w) })
	// GitHub Enterprise serves the API under /api/v3 and /api/graphql.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/graphql":
			r.URL.Path = "/graphql"
		case strings.HasPrefix(r.URL.Path, "/api/v3/"):
			r.URL.Path = strings.TrimPrefix(r.URL.Path, "/api/v3")
		}
		r.URL.RawPath = ""
		mux.ServeHTTP(w, r)
	})
}

// answer runs h with the server's lock held and writes its reply.
func (s *Server) answer(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		rep := h(r)
		s.mu.Unlock()
		rep.write(w)
	})
}

// inRepo finds the repository the path names, or answers 404.
func (s *Server) inRepo(h repoHandler) handler {
	return func(r *http.Request) reply {
		repo := s.repos[repoKey(r.PathValue("owner")+"/"+r.PathValue("repo"))]
		if repo == nil {
			return notFound()
		}
		return h(r, repo)
	}
}

func (rep reply) write(w http.ResponseWriter) {
	if rep.location != "" {
		w.Header().Set("Location", rep.location)
		w.WriteHeader(rep.status)
		return
	}
	body, ctype := rep.encode()
	if ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	w.WriteHeader(rep.status)
	if rep.status != http.StatusNoContent {
		_, _ = w.Write(body)
	}
}

// encode is the reply's body and content type: raw as it is, else body as
// JSON.
func (rep reply) encode() ([]byte, string) {
	if rep.raw != nil || rep.body == nil {
		return rep.raw, rep.contentType
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(rep.body)
	return buf.Bytes(), "application/json; charset=utf-8"
}

// decode reads a request's JSON body into v, or answers why it cannot.
func decode(r *http.Request, v any) *reply {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		rep := errReply(http.StatusBadRequest, "Problems parsing JSON")
		return &rep
	}
	return nil
}

// page renders the page of items that the request's page and per_page
// ask for (30 a page unless told, 100 at most), as GitHub paginates.
func page[T any](r *http.Request, items []T, render func(T) map[string]any) []map[string]any {
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

// apiBase is the server's own URL as the client reached it.
func apiBase(r *http.Request) string { return "http://" + r.Host }

// ts is GitHub's timestamp: RFC 3339 in UTC, null for none.
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}
