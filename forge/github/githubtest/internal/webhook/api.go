package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/rest"
)

// The REST hooks API. Each handler answers for its repository's hooks
// with the server's lock held.

func (hs *Hooks) hookJSON(r *http.Request, h *hook) map[string]any {
	base := fmt.Sprintf("%s/repos/%s/hooks/%d", rest.Base(r), hs.fullName(), h.id)
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

// CreateHook answers POST /repos/{owner}/{repo}/hooks.
func (hs *Hooks) CreateHook(r *http.Request) rest.Reply {
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
	for _, h := range hs.hooks {
		// GitHub allows one gh webhook forward session per repository, and
		// one hook per URL and events.
		if (in.Name == "cli" && h.name == "cli") || (in.Name == "web" && h.url == in.Config.URL && slices.Equal(h.events, in.Events)) {
			return rest.JSON(http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
				"errors": []map[string]any{{"resource": "Hook", "code": "custom", "message": "Hook already exists on this repository"}}})
		}
	}
	active := true
	if in.Active != nil {
		active = *in.Active
	}
	h := &hook{id: hs.out.nextID(), name: in.Name, active: active, events: in.Events, url: in.Config.URL, secret: in.Config.Secret, created: hs.out.now()}
	hs.hooks = append(hs.hooks, h)
	// GitHub pings a hook once it is made.
	hs.emitTo(h, "ping", map[string]any{"zen": "Keep it logically awesome.", "hook_id": h.id})
	return rest.JSON(http.StatusCreated, hs.hookJSON(r, h))
}

// ListHooks answers GET /repos/{owner}/{repo}/hooks.
func (hs *Hooks) ListHooks(r *http.Request) rest.Reply {
	return rest.JSON(http.StatusOK, rest.Page(r, hs.hooks, func(h *hook) map[string]any { return hs.hookJSON(r, h) }))
}

// onHook finds the hook the path names, or answers 404.
func (hs *Hooks) onHook(r *http.Request, answer func(h *hook) rest.Reply) rest.Reply {
	id := rest.PathID(r, "hook_id")
	i := slices.IndexFunc(hs.hooks, func(h *hook) bool { return h.id == id })
	if i < 0 {
		return rest.NotFound()
	}
	return answer(hs.hooks[i])
}

// GetHook answers GET /repos/{owner}/{repo}/hooks/{hook_id}.
func (hs *Hooks) GetHook(r *http.Request) rest.Reply {
	return hs.onHook(r, func(h *hook) rest.Reply { return rest.JSON(http.StatusOK, hs.hookJSON(r, h)) })
}

// UpdateHook answers PATCH /repos/{owner}/{repo}/hooks/{hook_id}.
func (hs *Hooks) UpdateHook(r *http.Request) rest.Reply {
	return hs.onHook(r, func(h *hook) rest.Reply {
		var in hookIn
		if rep := rest.Decode(r, &in); rep != nil {
			return *rep
		}
		if in.Active != nil {
			h.active = *in.Active
		}
		if in.Events != nil {
			h.events = in.Events
		}
		if in.Config != nil {
			h.url, h.secret = in.Config.URL, in.Config.Secret
		}
		return rest.JSON(http.StatusOK, hs.hookJSON(r, h))
	})
}

// DeleteHook answers DELETE /repos/{owner}/{repo}/hooks/{hook_id}.
func (hs *Hooks) DeleteHook(r *http.Request) rest.Reply {
	return hs.onHook(r, func(h *hook) rest.Reply {
		hs.hooks = slices.DeleteFunc(hs.hooks, func(x *hook) bool { return x == h })
		return rest.Reply{Status: http.StatusNoContent}
	})
}

// PingHook answers POST /repos/{owner}/{repo}/hooks/{hook_id}/pings.
func (hs *Hooks) PingHook(r *http.Request) rest.Reply {
	return hs.onHook(r, func(h *hook) rest.Reply {
		hs.emitTo(h, "ping", map[string]any{"zen": "Design for failure.", "hook_id": h.id})
		return rest.Reply{Status: http.StatusNoContent}
	})
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

// ListDeliveries answers GET .../hooks/{hook_id}/deliveries newest first,
// as GitHub does; a delivery not yet attempted is not listed.
func (hs *Hooks) ListDeliveries(r *http.Request) rest.Reply {
	return hs.onHook(r, func(h *hook) rest.Reply {
		var ds []*delivery
		for _, d := range slices.Backward(h.deliveries) {
			if !d.deliveredAt.IsZero() {
				ds = append(ds, d)
			}
		}
		return rest.JSON(http.StatusOK, rest.Page(r, ds, deliveryJSON))
	})
}

// onDelivery finds the attempted delivery the path names, or answers 404.
func (hs *Hooks) onDelivery(r *http.Request, answer func(h *hook, d *delivery) rest.Reply) rest.Reply {
	return hs.onHook(r, func(h *hook) rest.Reply {
		id := rest.PathID(r, "delivery_id")
		i := slices.IndexFunc(h.deliveries, func(d *delivery) bool { return d.id == id && !d.deliveredAt.IsZero() })
		if i < 0 {
			return rest.NotFound()
		}
		return answer(h, h.deliveries[i])
	})
}

// GetDelivery answers GET .../hooks/{hook_id}/deliveries/{delivery_id}.
func (hs *Hooks) GetDelivery(r *http.Request) rest.Reply {
	return hs.onDelivery(r, func(h *hook, d *delivery) rest.Reply {
		out := deliveryJSON(d)
		out["url"] = h.url
		out["request"] = map[string]any{"headers": map[string]any{"X-GitHub-Event": d.event, "X-GitHub-Delivery": d.guid}, "payload": json.RawMessage(d.payload)}
		out["response"] = map[string]any{"headers": map[string]any{}, "payload": nil}
		return rest.JSON(http.StatusOK, out)
	})
}

// Redeliver answers POST .../deliveries/{delivery_id}/attempts.
func (hs *Hooks) Redeliver(r *http.Request) rest.Reply {
	return hs.onDelivery(r, func(h *hook, d *delivery) rest.Reply {
		hs.deliver(h, d.event, d.action, d.payload, true)
		return rest.JSON(http.StatusAccepted, map[string]any{})
	})
}
