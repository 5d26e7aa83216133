package githubtest

import (
	"net/http"
	"strings"

	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/gql"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/rest"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/webhook"
)

// A handler answers one endpoint with the server's lock held.
type handler func(r *http.Request) rest.Reply

// A repoHandler answers an endpoint under /repos/{owner}/{repo}.
type repoHandler func(r *http.Request, repo *Repo) rest.Reply

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

		EndpointCreateHook:     onHooks((*webhook.Hooks).CreateHook),
		EndpointListHooks:      onHooks((*webhook.Hooks).ListHooks),
		EndpointGetHook:        onHooks((*webhook.Hooks).GetHook),
		EndpointUpdateHook:     onHooks((*webhook.Hooks).UpdateHook),
		EndpointDeleteHook:     onHooks((*webhook.Hooks).DeleteHook),
		EndpointPingHook:       onHooks((*webhook.Hooks).PingHook),
		EndpointListDeliveries: onHooks((*webhook.Hooks).ListDeliveries),
		EndpointGetDelivery:    onHooks((*webhook.Hooks).GetDelivery),
		EndpointRedeliver:      onHooks((*webhook.Hooks).Redeliver),
	} {
		handle(edge.Route{Endpoint: endpoint}, s.inRepo(h))
	}
	handle(edge.Route{Endpoint: EndpointGraphQL, Resource: edge.GraphQL, Kind: gql.OperationName}, s.graphql)
	// Log downloads redirect here, like GitHub's signed blob URLs: no
	// token needed and no rate limit.
	handle(edge.Route{Endpoint: EndpointLogBlob, Public: true}, s.logBlob)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { rest.NotFound().Write(w) })
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
		rep.Write(w)
	})
}

// inRepo finds the repository the path names, or answers 404.
func (s *Server) inRepo(h repoHandler) handler {
	return func(r *http.Request) rest.Reply {
		repo := s.repos[repoKey(r.PathValue("owner")+"/"+r.PathValue("repo"))]
		if repo == nil {
			return rest.NotFound()
		}
		return h(r, repo)
	}
}
