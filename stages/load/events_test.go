package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

func TestEventsSettings(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		want     stages.Events
	}{
		{"default: poll", "", stages.Events{Mode: stages.EventsPoll, Listen: "127.0.0.1:0"}},
		{"gh-forward", "events: {mode: gh-forward}\n", stages.Events{Mode: stages.EventsForward, Listen: "127.0.0.1:0"}},
		{"gh-forward with its command", "events: {mode: gh-forward, forward_command: [/opt/gh, webhook, forward]}\n",
			stages.Events{Mode: stages.EventsForward, Listen: "127.0.0.1:0", ForwardCommand: []string{"/opt/gh", "webhook", "forward"}}},
		{"webhook", "events:\n  mode: webhook\n  url: https://ci.example.com/hook\n  listen: 127.0.0.1:8765\n  secret_file: run/secret\n",
			stages.Events{Mode: stages.EventsWebhook, URL: "https://ci.example.com/hook", Listen: "127.0.0.1:8765", SecretFile: "/repo/run/secret"}},
		{"gh-forward on loopback", "events: {mode: gh-forward, listen: \"[::1]:8765\"}\n", stages.Events{Mode: stages.EventsForward, Listen: "[::1]:8765"}},
		{"gh-forward on localhost", "events: {mode: gh-forward, listen: \"localhost:0\"}\n", stages.Events{Mode: stages.EventsForward, Listen: "localhost:0"}},
		{"webhook on every interface", "events:\n  mode: webhook\n  url: https://ci.example.com/hook\n  listen: 0.0.0.0:8765\n",
			stages.Events{Mode: stages.EventsWebhook, URL: "https://ci.example.com/hook", Listen: "0.0.0.0:8765"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseYAML(t, withSettings(stages.Canonical, tt.settings))
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Events)
		})
	}
}

// Each mistake is named where it is written, with what to write instead.
func TestEventsSettingsRefused(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		want     string
	}{
		{"unknown mode", "events: {mode: websocket}\n", "/repo/.agenttree.yaml:1:16: error: unknown events.mode \"websocket\" (use `poll`, `gh-forward` or `webhook`)"},
		{"webhook without url", "events:\n  mode: webhook\n  listen: 127.0.0.1:8765\n",
			"/repo/.agenttree.yaml:2:9: error: events.mode webhook needs events.url (add `url:` under `events:`"},
		{"webhook on a free port", "events:\n  mode: webhook\n  url: https://x.example/h\n",
			"/repo/.agenttree.yaml:2:3: error: events.listen \"127.0.0.1:0\" takes a free port, but webhook mode needs a fixed one"},
		{"url not a URL", "events:\n  mode: webhook\n  url: ci.example.com\n  listen: 127.0.0.1:8765\n",
			"/repo/.agenttree.yaml:3:8: error: bad events.url \"ci.example.com\""},
		{"listen without a port", "events: {listen: localhost}\n", "/repo/.agenttree.yaml:1:18: error: bad events.listen \"localhost\""},
		{"the secret itself", "events: {secret: hunter2}\n", "/repo/.agenttree.yaml:1:10: error: "},
		{"empty forward command", "events: {forward_command: []}\n", "/repo/.agenttree.yaml:1:27: error: events.forward_command names no program"},
		{"gh-forward on every interface", "events:\n  mode: gh-forward\n  listen: 0.0.0.0:8765\n",
			"/repo/.agenttree.yaml:3:11: error: events.listen \"0.0.0.0:8765\" is not a loopback address, but gh-forward mode receives only from the forwarder it runs on this machine (write a loopback address"},
		{"gh-forward on no host", "events:\n  listen: \":8765\"\n  mode: gh-forward\n",
			"/repo/.agenttree.yaml:2:11: error: events.listen \":8765\" is not a loopback address"},
		{"gh-forward on a public name", "events: {mode: gh-forward, listen: \"ci.example.com:8765\"}\n",
			"/repo/.agenttree.yaml:1:36: error: events.listen \"ci.example.com:8765\" is not a loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, withSettings(stages.Canonical, tt.settings))
			require.Error(t, err)
			errs := errorStrings(t, err)
			require.Len(t, errs, 1, "%q", errs)
			assert.Contains(t, errs[0], tt.want)
		})
	}
}
