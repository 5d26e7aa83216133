package ghapi

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Hook is a repository webhook, as GET /repos/{owner}/{repo}/hooks/{id}
// answers it (the fields agenttree reads).
type Hook struct {
	ID     int64    `json:"id"`
	Name   string   `json:"name"` // "web", or "cli" for gh webhook forward's
	Active bool     `json:"active"`
	Events []string `json:"events"`
	Config struct {
		URL         string `json:"url"`
		ContentType string `json:"content_type"`
	} `json:"config"`
}

// HookConfig is what CreateHook and UpdateHook send.
type HookConfig struct {
	URL    string
	Secret string
	Events []string
}

func (h HookConfig) body() map[string]any {
	return map[string]any{
		"name": "web", "active": true, "events": h.Events,
		"config": map[string]any{"url": h.URL, "content_type": "json", "secret": h.Secret, "insecure_ssl": "0"},
	}
}

// Delivery is one delivery of a hook, as the Webhook Deliveries API lists
// it.
type Delivery struct {
	ID          int64     `json:"id"`
	GUID        string    `json:"guid"`
	DeliveredAt time.Time `json:"delivered_at"`
	Redelivery  bool      `json:"redelivery"`
	Status      string    `json:"status"`
	StatusCode  int       `json:"status_code"`
	Event       string    `json:"event"`
	Action      string    `json:"action"`
}

// OK says GitHub's delivery reached a receiver that took it.
func (d Delivery) OK() bool { return d.StatusCode >= 200 && d.StatusCode < 300 }

// DeliveryPayload is a delivery with the payload GitHub sent.
type DeliveryPayload struct {
	Delivery
	Request struct {
		Payload rawJSON `json:"payload"`
	} `json:"request"`
}

// rawJSON keeps a JSON value as its bytes.
type rawJSON []byte

func (r *rawJSON) UnmarshalJSON(b []byte) error { *r = append((*r)[:0], b...); return nil }

// Hooks lists the repository's webhooks (the first 100).
func (c *Client) Hooks(ctx context.Context) ([]Hook, error) {
	var out []Hook
	err := c.get(ctx, "github: listing the hooks of "+c.repo.FullName(), c.path("hooks?per_page=100"), &out)
	return out, err
}

// Hook reads one webhook; an error wrapping ErrNotFound when it is gone.
func (c *Client) Hook(ctx context.Context, id int64) (*Hook, error) {
	var out Hook
	if err := c.get(ctx, fmt.Sprintf("github: hook %d of %s", id, c.repo.FullName()), c.path("hooks/%d", id), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateHook creates a webhook that delivers JSON to h.URL, signed with
// h.Secret. GitHub pings it once made.
func (c *Client) CreateHook(ctx context.Context, h HookConfig) (*Hook, error) {
	var out Hook
	err := c.do(ctx, request{op: "github: creating a webhook on " + c.repo.FullName(), method: http.MethodPost, path: c.path("hooks"), body: h.body()}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateHook sets a webhook's URL, secret and events, and makes it active.
func (c *Client) UpdateHook(ctx context.Context, id int64, h HookConfig) error {
	return c.do(ctx, request{op: fmt.Sprintf("github: updating hook %d of %s", id, c.repo.FullName()), method: http.MethodPatch,
		path: c.path("hooks/%d", id), body: h.body(), idempotent: true}, nil)
}

// DeleteHook deletes a webhook.
func (c *Client) DeleteHook(ctx context.Context, id int64) error {
	return c.do(ctx, request{op: fmt.Sprintf("github: deleting hook %d of %s", id, c.repo.FullName()), method: http.MethodDelete, path: c.path("hooks/%d", id)}, nil)
}

// PingHook asks GitHub to send the hook a ping event.
func (c *Client) PingHook(ctx context.Context, id int64) error {
	return c.do(ctx, request{op: fmt.Sprintf("github: pinging hook %d of %s", id, c.repo.FullName()), method: http.MethodPost,
		path: c.path("hooks/%d/pings", id), idempotent: true}, nil)
}

// DeliveriesPage is how many deliveries Deliveries lists at most.
const DeliveriesPage = 100

// Deliveries lists a hook's latest deliveries, newest first: one page of
// DeliveriesPage, so a full page may not reach back as far as the caller
// needs.
func (c *Client) Deliveries(ctx context.Context, hookID int64) ([]Delivery, error) {
	var out []Delivery
	err := c.get(ctx, fmt.Sprintf("github: deliveries of hook %d of %s", hookID, c.repo.FullName()), c.path("hooks/%d/deliveries?per_page=%d", hookID, DeliveriesPage), &out)
	return out, err
}

// DeliveryPayload reads one delivery with its payload.
func (c *Client) DeliveryPayload(ctx context.Context, hookID, id int64) (*DeliveryPayload, error) {
	var out DeliveryPayload
	if err := c.get(ctx, fmt.Sprintf("github: delivery %d of hook %d", id, hookID), c.path("hooks/%d/deliveries/%d", hookID, id), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Redeliver asks GitHub to send a delivery again.
func (c *Client) Redeliver(ctx context.Context, hookID, id int64) error {
	return c.do(ctx, request{op: fmt.Sprintf("github: redelivering %d of hook %d", id, hookID), method: http.MethodPost,
		path: c.path("hooks/%d/deliveries/%d/attempts", hookID, id)}, nil)
}
