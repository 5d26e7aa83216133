package githubtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// reply is what a handler answers; serve turns it into HTTP.
type reply struct {
	status      int
	body        any    // JSON-encoded unless raw is set
	raw         []byte // sent as is with contentType
	contentType string
	location    string
}

func jsonReply(status int, body any) reply { return reply{status: status, body: body} }

func errReply(status int, msg string) reply {
	return reply{status: status, body: map[string]any{
		"message":           msg,
		"documentation_url": "https://docs.github.com/rest",
		"status":            strconv.Itoa(status),
	}}
}

type handler func(r *http.Request, repo *Repo) reply

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(endpoint string, h handler, opts ...routeOpt) {
		mux.Handle(endpoint, s.wrap(endpoint, h, opts...))
	}
	handle(EndpointRepo, s.getRepo)
	handle(EndpointListPulls, s.listPulls)
	handle(EndpointCreatePull, s.createPull)
	handle(EndpointGetPull, s.getPull)
	handle(EndpointUpdatePull, s.updatePull)
	handle(EndpointMergePull, s.mergePull)
	handle(EndpointCheckRuns, s.listCheckRuns)
	handle(EndpointStatus, s.combinedStatus)
	handle(EndpointRerequest, s.rerequestCheckRun)
	handle(EndpointRerunJob, s.rerunJob)
	handle(EndpointJobLogs, s.jobLogs)
	handle(EndpointAddLabels, s.addLabels)
	handle(EndpointCreateComment, s.createComment)
	handle(EndpointListComments, s.listComments)
	handle(EndpointDeleteRef, s.deleteRef)
	handle(EndpointGraphQL, s.graphql, noRepo, graphqlResource)
	// Log downloads redirect here, like GitHub's signed blob URLs: no
	// token needed and no rate limit.
	handle(EndpointLogBlob, s.logBlob, noRepo, noAuth)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, errReply(http.StatusNotFound, "Not Found").body)
	})
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

type routeConf struct{ noRepo, noAuth, graphql bool }

type routeOpt func(*routeConf)

func noRepo(c *routeConf) { c.noRepo = true }

func noAuth(c *routeConf) { c.noAuth = true }

func graphqlResource(c *routeConf) { c.graphql = true }

// route is one endpoint as serve answers it.
type route struct {
	routeConf
	endpoint string
	resource string // the rate limit it counts against: core or graphql
	h        handler
}

func (s *Server) wrap(endpoint string, h handler, opts ...routeOpt) http.Handler {
	rt := route{endpoint: endpoint, resource: "core", h: h}
	for _, o := range opts {
		o(&rt.routeConf)
	}
	if rt.graphql {
		rt.resource = "graphql"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, rt) })
}

// serve does what every GitHub endpoint does around its own work: count,
// authenticate, rate-limit, inject faults, and answer GETs with ETags and
// 304s.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, rt route) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[rt.endpoint]++
	if !rt.noAuth && !s.authorized(r) {
		writeJSON(w, http.StatusUnauthorized, errReply(http.StatusUnauthorized, "Bad credentials").body)
		return
	}
	var rl *rateLimit
	if !rt.noAuth {
		rl = s.limit(rt.resource)
		setRateHeaders(w.Header(), rt.resource, rl)
		if rl.remaining <= 0 {
			s.writeExhausted(w, rt.resource, rl)
			return
		}
	}
	fault := s.nextFault(rt.endpoint)
	if fault != nil && !fault.AfterHandling {
		s.faultsSent++
		writeFault(w, *fault)
		return
	}
	var repo *Repo
	if !rt.noRepo {
		if repo = s.repos[strings.ToLower(r.PathValue("owner")+"/"+r.PathValue("repo"))]; repo == nil {
			writeJSON(w, http.StatusNotFound, errReply(http.StatusNotFound, "Not Found").body)
			return
		}
	}
	rep := rt.h(r, repo)
	if fault != nil {
		s.faultsSent++
		writeFault(w, *fault)
		return
	}
	s.send(w, r, rt, rep, rl)
}

// send writes a handler's reply: a redirect, or a body with an ETag that
// counts against the rate limit unless the client has it already (304).
func (s *Server) send(w http.ResponseWriter, r *http.Request, rt route, rep reply, rl *rateLimit) {
	if rep.location != "" {
		w.Header().Set("Location", rep.location)
		w.WriteHeader(rep.status)
		return
	}
	body, ctype := rep.encode()
	if r.Method == http.MethodGet && rep.status == http.StatusOK && !rt.noAuth {
		sum := sha256.Sum256(body)
		etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
		w.Header().Set("ETag", etag)
		w.Header().Set("Cache-Control", "private, max-age=60, s-maxage=60")
		if etagMatch(r.Header.Get("If-None-Match"), etag) {
			// A 304 to an authorized request does not count against
			// the primary rate limit on GitHub.
			s.notModified[rt.endpoint]++
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if rl != nil {
		rl.remaining--
		rl.used++
		setRateHeaders(w.Header(), rt.resource, rl)
	}
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

func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	for _, prefix := range []string{"token ", "Bearer ", "bearer "} {
		if tok, ok := strings.CutPrefix(h, prefix); ok {
			return tok == s.Token && tok != ""
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func etagMatch(ifNoneMatch, etag string) bool {
	if ifNoneMatch == "" {
		return false
	}
	weak := func(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "W/") }
	for _, c := range strings.Split(ifNoneMatch, ",") {
		if strings.TrimSpace(c) == "*" || weak(c) == weak(etag) {
			return true
		}
	}
	return false
}
