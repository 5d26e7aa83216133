// Package webhook is the fake GitHub server's repository webhooks: the
// hooks REST API (create, list, get, update, delete, ping), the Webhook
// Deliveries API (list, get, redeliver), and the signed deliveries it
// sends for what changes, one at a time in the order they were made, as
// GitHub's hookshot does. The repository state the events tell of stays
// with githubtest, which tells a repository's Hooks of each change.
package webhook

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
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

// Hooks is one repository's webhooks. Its methods are called with the
// server's lock held, the lock the Outbox was given.
type Hooks struct {
	out                 *Outbox
	owner, name, sender string
	hooks               []*hook
}

// Hooks makes the webhooks of repository owner/name, whose events name
// sender as who made the change.
func (o *Outbox) Hooks(owner, name, sender string) *Hooks {
	return &Hooks{out: o, owner: owner, name: name, sender: sender}
}

func (hs *Hooks) fullName() string { return hs.owner + "/" + hs.name }

// Emit delivers event to every active hook that subscribes to it, with
// payload completed by the repository and the sender. The deliveries go
// out once the server's lock is released.
func (hs *Hooks) Emit(event, action string, payload map[string]any) {
	if len(hs.hooks) == 0 {
		return
	}
	if action != "" {
		payload["action"] = action
	}
	payload["repository"] = map[string]any{"full_name": hs.fullName(), "name": hs.name, "owner": map[string]any{"login": hs.owner}}
	payload["sender"] = map[string]any{"login": hs.sender}
	body, _ := json.Marshal(payload)
	for _, h := range hs.hooks {
		if h.active && (event == "ping" || slices.Contains(h.events, event) || slices.Contains(h.events, "*")) {
			hs.deliver(h, event, action, body, false)
		}
	}
}

// emitTo delivers event to h alone, as a ping is.
func (hs *Hooks) emitTo(h *hook, event string, payload map[string]any) {
	payload["repository"] = map[string]any{"full_name": hs.fullName()}
	body, _ := json.Marshal(payload)
	hs.deliver(h, event, "", body, false)
}

func (hs *Hooks) deliver(h *hook, event, action string, body []byte, redelivery bool) {
	id := hs.out.nextID()
	d := &delivery{id: id, guid: fmt.Sprintf("%08x-fake-4000-8000-%012x", id, id), event: event, action: action, payload: body, redelivery: redelivery}
	h.deliveries = append(h.deliveries, d)
	hs.out.push(pending{h: h, d: d})
}

// Deliveries is how many deliveries have been attempted to the hooks,
// and how many of those were answered 2xx.
func (hs *Hooks) Deliveries() (made, ok int) {
	for _, h := range hs.hooks {
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

// IDs lists the hooks' ids.
func (hs *Hooks) IDs() []int64 {
	var out []int64
	for _, h := range hs.hooks {
		out = append(out, h.id)
	}
	return out
}

// Delete deletes a hook out of band, as a person would in the
// repository's settings.
func (hs *Hooks) Delete(id int64) {
	hs.hooks = slices.DeleteFunc(hs.hooks, func(h *hook) bool { return h.id == id })
}

// PR is a pull request as webhook payloads name it.
type PR struct {
	Number          int
	State           string // open, closed or merged
	HeadSHA, Branch string
}

func (p PR) payload() map[string]any {
	return map[string]any{"number": p.Number, "state": p.State, "head": map[string]any{"sha": p.HeadSHA, "ref": p.Branch}, "merged": p.State == "merged"}
}

// PullRequest sends pull_request with action.
func (hs *Hooks) PullRequest(p PR, action string) {
	hs.Emit("pull_request", action, map[string]any{"number": p.Number, "pull_request": p.payload()})
}

// Push sends push: branch moved from before to after.
func (hs *Hooks) Push(branch, before, after string) {
	hs.Emit("push", "", map[string]any{"ref": "refs/heads/" + branch, "before": before, "after": after, "deleted": false})
}

// Review sends pull_request_review submitted; state is GraphQL's
// spelling (APPROVED), which the payload spells in lower case.
func (hs *Hooks) Review(p PR, id int64, state, commitID, author string) {
	hs.Emit("pull_request_review", "submitted", map[string]any{
		"review":       map[string]any{"id": id, "state": strings.ToLower(state), "commit_id": commitID, "user": map[string]any{"login": author}},
		"pull_request": p.payload()})
}

// ReviewComment sends pull_request_review_comment created.
func (hs *Hooks) ReviewComment(p PR, id int64, body, author string) {
	hs.Emit("pull_request_review_comment", "created", map[string]any{
		"comment":      map[string]any{"id": id, "body": body, "commit_id": p.HeadSHA, "user": map[string]any{"login": author}},
		"pull_request": p.payload()})
}

// Status sends status for a commit status.
func (hs *Hooks) Status(id int64, sha, context, state, targetURL string) {
	hs.Emit("status", "", map[string]any{"id": id, "sha": sha, "context": context, "state": state, "target_url": targetURL})
}

// CheckRun is a check run as webhook payloads name it.
type CheckRun struct {
	ID                            int64
	Name, SHA, Status, Conclusion string
}

// CheckRun sends check_run with action, naming the open PRs whose head
// is the run's commit; suiteDone adds check_suite completed, for a run
// that completed the last of the commit's latest runs.
func (hs *Hooks) CheckRun(c CheckRun, action string, prs []PR, suiteDone bool) {
	refs := []map[string]any{}
	for _, p := range prs {
		refs = append(refs, map[string]any{"number": p.Number, "head": map[string]any{"sha": p.HeadSHA, "ref": p.Branch}})
	}
	hs.Emit("check_run", action, map[string]any{"check_run": map[string]any{
		"id": c.ID, "name": c.Name, "head_sha": c.SHA, "status": c.Status, "conclusion": c.Conclusion, "pull_requests": refs}})
	if suiteDone {
		hs.Emit("check_suite", "completed", map[string]any{"check_suite": map[string]any{"head_sha": c.SHA, "status": "completed", "pull_requests": refs}})
	}
}
