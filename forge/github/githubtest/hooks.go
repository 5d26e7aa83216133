package githubtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/rest"
)

// hook is a repository webhook as the fake keeps it.
type hook struct {
	id         int64
	name       string // "web", or "cli" for gh webhook forward's
	active     bool
	events     []string
	url        string
	secret     string
	created    time.Time
	deliveries []*delivery
}

// delivery is one attempt to deliver an event to a hook.
type delivery struct {
	id          int64
	guid        string
	event       string
	action      string
	payload     []byte
	redelivery  bool
	deliveredAt time.Time
	duration    time.Duration
	statusCode  int
	status      string
}

// outbox sends the fake's deliveries in the order they were made, one at
// a time, outside the server's lock, as GitHub's hookshot does.
type outbox struct {
	mu      sync.Mutex
	queue   []pending
	wake    chan struct{}
	stopped chan struct{}
	client  *http.Client
}

type pending struct {
	repo *Repo
	h    *hook
	d    *delivery
}

func newOutbox() *outbox {
	return &outbox{wake: make(chan struct{}, 1), stopped: make(chan struct{}), client: &http.Client{Timeout: 10 * time.Second}}
}

func (o *outbox) push(p pending) {
	o.mu.Lock()
	o.queue = append(o.queue, p)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *outbox) run(s *Server) {
	for {
		select {
		case <-o.stopped:
			return
		case <-o.wake:
		}
		for {
			o.mu.Lock()
			if len(o.queue) == 0 {
				o.mu.Unlock()
				break
			}
			p := o.queue[0]
			o.queue = o.queue[1:]
			o.mu.Unlock()
			s.send(p)
		}
	}
}

// send posts one delivery and records how it went.
func (s *Server) send(p pending) {
	s.mu.Lock()
	url, secret, hookID := p.h.url, p.h.secret, p.h.id
	s.mu.Unlock()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(p.d.payload))
	code, status := 0, "failed to connect to host"
	start := time.Now()
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "GitHub-Hookshot/fake")
		req.Header.Set("X-GitHub-Event", p.d.event)
		req.Header.Set("X-GitHub-Delivery", p.d.guid)
		req.Header.Set("X-GitHub-Hook-ID", strconv.FormatInt(hookID, 10))
		if secret != "" {
			req.Header.Set("X-Hub-Signature-256", sign(secret, p.d.payload))
		}
		var resp *http.Response
		if resp, err = s.outbox.client.Do(req); err == nil {
			resp.Body.Close()
			code, status = resp.StatusCode, "OK"
			if code < 200 || code > 299 {
				status = fmt.Sprintf("Invalid HTTP Response: %d", code)
			}
		}
	}
	s.mu.Lock()
	p.d.statusCode, p.d.status, p.d.duration, p.d.deliveredAt = code, status, time.Since(start), s.now()
	s.mu.Unlock()
}

func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// emit delivers event to every active hook of r that subscribes to it,
// with payload completed by the repository and the sender. Called with
// the server's lock held; the deliveries go out after it is released.
func (r *Repo) emit(event, action string, payload map[string]any) {
	if len(r.hooks) == 0 {
		return
	}
	if action != "" {
		payload["action"] = action
	}
	payload["repository"] = map[string]any{"full_name": r.fullName(), "name": r.Name, "owner": map[string]any{"login": r.Owner}}
	payload["sender"] = map[string]any{"login": viewer}
	body, _ := json.Marshal(payload)
	for _, h := range r.hooks {
		if h.active && (event == "ping" || slices.Contains(h.events, event) || slices.Contains(h.events, "*")) {
			r.deliver(h, event, action, body, false)
		}
	}
}

func (r *Repo) deliver(h *hook, event, action string, body []byte, redelivery bool) {
	d := &delivery{id: r.s.nextID(), guid: fmt.Sprintf("%08x-fake-4000-8000-%012x", r.s.id, r.s.id), event: event, action: action, payload: body, redelivery: redelivery}
	h.deliveries = append(h.deliveries, d)
	r.s.outbox.push(pending{repo: r, h: h, d: d})
}

// prPayload is a PR as webhook payloads name it: number and head.
func prPayload(p *prState) map[string]any {
	return map[string]any{"number": p.Number, "state": p.State, "head": map[string]any{"sha": p.HeadSHA, "ref": p.Branch}, "merged": p.State == "merged"}
}

// emitPR sends pull_request with action.
func (r *Repo) emitPR(p *prState, action string) {
	r.emit("pull_request", action, map[string]any{"number": p.Number, "pull_request": prPayload(p)})
}

// openPRsAt are the open PRs whose head is sha, as check runs name them.
func (r *Repo) openPRsAt(sha string) []map[string]any {
	out := []map[string]any{}
	for _, n := range sortedKeys(r.prs) {
		if p := r.prs[n]; p.State == "open" && p.HeadSHA == sha {
			out = append(out, map[string]any{"number": p.Number, "head": map[string]any{"sha": sha, "ref": p.Branch}})
		}
	}
	return out
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// emitCheckRun sends check_run, and check_suite completed once every
// latest run on the commit has completed.
func (r *Repo) emitCheckRun(c *CheckRun, action string) {
	prs := r.openPRsAt(c.SHA)
	r.emit("check_run", action, map[string]any{"check_run": map[string]any{
		"id": c.ID, "name": c.Name, "head_sha": c.SHA, "status": c.Status, "conclusion": c.Conclusion, "pull_requests": prs}})
	if action != "completed" {
		return
	}
	for _, other := range r.latestCheckRuns(c.SHA) {
		if other.Status != "completed" {
			return
		}
	}
	r.emit("check_suite", "completed", map[string]any{"check_suite": map[string]any{"head_sha": c.SHA, "status": "completed", "pull_requests": prs}})
}

// Deliveries is how many deliveries the fake has attempted to the
// repository's hooks, and how many of those were answered 2xx.
func (r *Repo) Deliveries() (made, ok int) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	for _, h := range r.hooks {
		for _, d := range h.deliveries {
			if d.deliveredAt.IsZero() {
				continue
			}
			made++
			if d.statusCode >= 200 && d.statusCode < 300 {
				ok++
			}
		}
	}
	return made, ok
}

// HookIDs lists the ids of the repository's hooks.
func (r *Repo) HookIDs() []int64 {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []int64
	for _, h := range r.hooks {
		out = append(out, h.id)
	}
	return out
}

// DeleteHook deletes a hook out of band, as a person would in the
// repository's settings.
func (r *Repo) DeleteHook(id int64) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.hooks = slices.DeleteFunc(r.hooks, func(h *hook) bool { return h.id == id })
}

// The REST hooks API.

func hookJSON(r *http.Request, repo *Repo, h *hook) map[string]any {
	base := fmt.Sprintf("%s/repos/%s/hooks/%d", rest.Base(r), repo.fullName(), h.id)
	out := map[string]any{
		"type": "Repository", "id": h.id, "name": h.name, "active": h.active, "events": h.events,
		"config":     map[string]any{"url": h.url, "content_type": "json", "insecure_ssl": "0", "secret": mask(h.secret)},
		"created_at": rest.Time(h.created), "updated_at": rest.Time(h.created),
		"url": base, "test_url": base + "/test", "ping_url": base + "/pings", "deliveries_url": base + "/deliveries",
	}
	return out
}

// mask is how GitHub shows a hook's secret: never the secret itself.
func mask(secret string) any {
	if secret == "" {
		return nil
	}
	return "********"
}

type hookIn struct {
	Name   string   `json:"name"`
	Active *bool    `json:"active"`
	Events []string `json:"events"`
	Config *struct {
		URL    string `json:"url"`
		Secret string `json:"secret"`
	} `json:"config"`
}

func (s *Server) createHook(r *http.Request, repo *Repo) rest.Reply {
	var in hookIn
	if rep := rest.Decode(r, &in); rep != nil {
		return *rep
	}
	if in.Name == "" {
		in.Name = "web"
	}
	if in.Config == nil || (in.Config.URL == "" && in.Name == "web") {
		return rest.Validation("Hook", "url", "missing_field")
	}
	if len(in.Events) == 0 {
		in.Events = []string{"push"}
	}
	for _, h := range repo.hooks {
		// GitHub allows one gh webhook forward session per repository, and
		// one hook per URL and events.
		if (in.Name == "cli" && h.name == "cli") || (in.Name == "web" && h.url == in.Config.URL && slices.Equal(h.events, in.Events)) {
			return rest.JSON(http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
				"errors": []map[string]any{{"resource": "Hook", "code": "custom", "message": "Hook already exists on this repository"}}})
		}
	}
	h := &hook{id: s.nextID(), name: in.Name, active: deref(in.Active, true), events: in.Events, url: in.Config.URL, secret: in.Config.Secret, created: s.now()}
	repo.hooks = append(repo.hooks, h)
	// GitHub pings a hook once it is made.
	repo.emitTo(h, "ping", map[string]any{"zen": "Keep it logically awesome.", "hook_id": h.id})
	return rest.JSON(http.StatusCreated, hookJSON(r, repo, h))
}

// emitTo delivers event to h alone, as a ping is.
func (r *Repo) emitTo(h *hook, event string, payload map[string]any) {
	payload["repository"] = map[string]any{"full_name": r.fullName()}
	body, _ := json.Marshal(payload)
	r.deliver(h, event, "", body, false)
}

func (s *Server) listHooks(r *http.Request, repo *Repo) rest.Reply {
	return rest.JSON(http.StatusOK, rest.Page(r, repo.hooks, func(h *hook) map[string]any { return hookJSON(r, repo, h) }))
}

// onHook finds the hook the path names, or answers 404.
func onHook(h func(r *http.Request, repo *Repo, hk *hook) rest.Reply) repoHandler {
	return func(r *http.Request, repo *Repo) rest.Reply {
		id := rest.PathID(r, "hook_id")
		i := slices.IndexFunc(repo.hooks, func(h *hook) bool { return h.id == id })
		if i < 0 {
			return rest.NotFound()
		}
		return h(r, repo, repo.hooks[i])
	}
}

func (s *Server) getHook(r *http.Request, repo *Repo, h *hook) rest.Reply {
	return rest.JSON(http.StatusOK, hookJSON(r, repo, h))
}

func (s *Server) updateHook(r *http.Request, repo *Repo, h *hook) rest.Reply {
	var in hookIn
	if rep := rest.Decode(r, &in); rep != nil {
		return *rep
	}
	h.active = deref(in.Active, h.active)
	if in.Events != nil {
		h.events = in.Events
	}
	if in.Config != nil {
		h.url, h.secret = in.Config.URL, in.Config.Secret
	}
	return rest.JSON(http.StatusOK, hookJSON(r, repo, h))
}

func (s *Server) deleteHook(r *http.Request, repo *Repo, h *hook) rest.Reply {
	repo.hooks = slices.DeleteFunc(repo.hooks, func(x *hook) bool { return x == h })
	return rest.Reply{Status: http.StatusNoContent}
}

func (s *Server) pingHook(r *http.Request, repo *Repo, h *hook) rest.Reply {
	repo.emitTo(h, "ping", map[string]any{"zen": "Design for failure.", "hook_id": h.id})
	return rest.Reply{Status: http.StatusNoContent}
}

func deliveryJSON(d *delivery) map[string]any {
	return map[string]any{
		"id": d.id, "guid": d.guid, "delivered_at": rest.Time(d.deliveredAt), "redelivery": d.redelivery,
		"duration": d.duration.Seconds(), "status": d.status, "status_code": d.statusCode, "event": d.event, "action": nilIfEmpty(d.action),
		"installation_id": nil, "repository_id": 1,
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// listDeliveries answers newest first, as GitHub does; a delivery not yet
// attempted is not listed.
func (s *Server) listDeliveries(r *http.Request, repo *Repo, h *hook) rest.Reply {
	var ds []*delivery
	for _, d := range slices.Backward(h.deliveries) {
		if !d.deliveredAt.IsZero() {
			ds = append(ds, d)
		}
	}
	return rest.JSON(http.StatusOK, rest.Page(r, ds, deliveryJSON))
}

func (s *Server) findDelivery(h func(r *http.Request, repo *Repo, hk *hook, d *delivery) rest.Reply) repoHandler {
	return onHook(func(r *http.Request, repo *Repo, hk *hook) rest.Reply {
		id := rest.PathID(r, "delivery_id")
		i := slices.IndexFunc(hk.deliveries, func(d *delivery) bool { return d.id == id && !d.deliveredAt.IsZero() })
		if i < 0 {
			return rest.NotFound()
		}
		return h(r, repo, hk, hk.deliveries[i])
	})
}

func (s *Server) getDelivery(r *http.Request, repo *Repo, h *hook, d *delivery) rest.Reply {
	out := deliveryJSON(d)
	out["url"] = h.url
	out["request"] = map[string]any{"headers": map[string]any{"X-GitHub-Event": d.event, "X-GitHub-Delivery": d.guid}, "payload": json.RawMessage(d.payload)}
	out["response"] = map[string]any{"headers": map[string]any{}, "payload": nil}
	return rest.JSON(http.StatusOK, out)
}

func (s *Server) redeliver(r *http.Request, repo *Repo, h *hook, d *delivery) rest.Reply {
	repo.deliver(h, d.event, d.action, d.payload, true)
	return rest.JSON(http.StatusAccepted, map[string]any{})
}

// emitReviewComment sends pull_request_review_comment created.
func (r *Repo) emitReviewComment(p *prState, c *comment) {
	r.emit("pull_request_review_comment", "created", map[string]any{
		"comment":      map[string]any{"id": c.id, "body": c.Body, "commit_id": p.HeadSHA, "user": map[string]any{"login": c.Author}},
		"pull_request": prPayload(p)})
}
