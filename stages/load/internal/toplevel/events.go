package toplevel

import (
	"net"
	"net/url"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/internal/loopback"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/settings"
)

// events reads `events:` and checks that its keys fit its mode: webhook
// mode needs the public URL and a fixed port for it to reach.
func (r *reader) events(k settings.Key, parent any, v *yaml.Node, name string) bool {
	set := r.section(k, parent, v, "events", name)
	if set == nil {
		return false
	}
	checkEvents(r.d, &r.cfg.Events, v, set)
	return true
}

func checkEvents(d *diag.Collector, ev *stages.Events, section *yaml.Node, set map[string]*yaml.Node) {
	at := func(key string) stages.Pos {
		if n := set[key]; n != nil {
			return d.Pos(n)
		}
		return d.Pos(section)
	}
	if n := set["listen"]; n != nil {
		host, _, err := net.SplitHostPort(ev.Listen)
		if err != nil {
			d.Errorf(d.Pos(n), "write HOST:PORT, e.g. `listen: 127.0.0.1:8765`", "bad events.listen %q: %v", ev.Listen, err)
			return
		}
		// gh-forward's deliveries come from the forwarder this machine
		// runs: an address beyond loopback would let anyone who reaches
		// it at the receiver, for nothing (docs/CONFIG.md,
		// events.listen). Webhook mode's come from the person's own
		// proxy or tunnel, which may be elsewhere.
		if ev.Mode == stages.EventsForward && !loopback.Host(host) {
			d.Errorf(d.Pos(n), "write a loopback address, e.g. `listen: 127.0.0.1:0`, or leave `listen` out; for deliveries to an address others reach, use `mode: webhook` with its `url`",
				"events.listen %q is not a loopback address, but gh-forward mode receives only from the forwarder it runs on this machine", ev.Listen)
			return
		}
	}
	if n := set["forward_command"]; n != nil && (len(ev.ForwardCommand) == 0 || strings.TrimSpace(ev.ForwardCommand[0]) == "") {
		d.Errorf(d.Pos(n), "leave it out for `[gh, webhook, forward]`, or name the program first", "events.forward_command names no program")
	}
	if n := set["secret_file"]; n != nil {
		switch p := ev.SecretFile; {
		case strings.TrimSpace(p) == "":
			d.Errorf(d.Pos(n), "leave it out for a secret made under the state directory", "events.secret_file is empty")
		case strings.HasPrefix(p, "~"):
			d.Errorf(d.Pos(n), "write the path in full, or relative to the config file", "events.secret_file %q starts with `~`, which is not expanded", p)
		case !filepath.IsAbs(p):
			if abs, err := filepath.Abs(filepath.Join(filepath.Dir(d.File), p)); err == nil {
				ev.SecretFile = abs
			}
		}
	}
	if ev.Mode != stages.EventsWebhook {
		return
	}
	if ev.URL == "" {
		d.Errorf(at("mode"), "add `url:` under `events:`, the public https URL GitHub delivers to (a proxy or tunnel of yours forwards it to `listen`)",
			"events.mode webhook needs events.url")
		return
	}
	if u, err := url.Parse(ev.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		d.Errorf(at("url"), "write the whole URL, e.g. `url: https://ci.example.com/agenttree/github`", "bad events.url %q: want an http(s) URL", ev.URL)
	}
	if _, port, _ := net.SplitHostPort(ev.Listen); port == "0" {
		d.Errorf(at("listen"), "write the port your proxy forwards events.url to, e.g. `listen: 127.0.0.1:8765`",
			"events.listen %q takes a free port, but webhook mode needs a fixed one for events.url to reach", ev.Listen)
	}
}
