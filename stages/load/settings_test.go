package load_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
	"github.com/agenttree/agenttree/stages/settings"
)

// withSettings writes top-level settings above a one-stage pipeline in
// the given form: the settings stand at the same place in both.
func withSettings(form stages.Form, settings string) string {
	if form == stages.Compatible {
		return settings + "flows:\n  default:\n    stages:\n      a:\n"
	}
	return settings + "stages: [{name: a}]\n"
}

var forms = []stages.Form{stages.Canonical, stages.Compatible}

func TestControllerSettings(t *testing.T) {
	defaults := settings.Defaults()
	tests := []struct {
		name     string
		settings string
		got      func(*stages.Config) any
		want     any
	}{
		{"controller defaults", "", controller, defaults.Controller},
		{"controller", "controller: {interval_s: 2, concurrency: 8}\n", controller, stages.Controller{Interval: 2 * time.Second, Concurrency: 8}},
		{"controller tick as a duration", "controller:\n  interval_s: 1m30s\n", controller, stages.Controller{Interval: 90 * time.Second, Concurrency: 4}},
		{"breaker defaults", "", breaker, defaults.CircuitBreaker},
		{"breaker", "circuit_breaker: {half_open_after: 1, no_progress_threshold: 5, same_error_threshold: 2}\n", breaker,
			stages.CircuitBreaker{HalfOpenAfter: 1, NoProgress: 5, SameError: 2}},
		{"breaker: equal thresholds", "circuit_breaker: {half_open_after: 4, no_progress_threshold: 4}\n", breaker,
			stages.CircuitBreaker{HalfOpenAfter: 4, NoProgress: 4, SameError: 3}},
		{"breaker: the default half-open makes way for a lower threshold", "circuit_breaker: {no_progress_threshold: 1}\n", breaker,
			stages.CircuitBreaker{HalfOpenAfter: 1, NoProgress: 1, SameError: 3}},
		{"breaker: the default threshold makes way for a later half-open", "circuit_breaker: {half_open_after: 5}\n", breaker,
			stages.CircuitBreaker{HalfOpenAfter: 5, NoProgress: 5, SameError: 3}},
		{"tmux defaults", "", tmux, defaults.Tmux},
		{"tmux", "tmux:\n  session: \"agent-{{role}}-{{issue_id}}\"\n  socket: /tmp/agents.sock\n  manager: boss\n", tmux,
			stages.Tmux{Session: "agent-{{role}}-{{issue_id}}", Socket: "/tmp/agents.sock", Manager: "boss"}},
		{"tmux socket relative to the config file", "tmux: {socket: run/tmux.sock}\n", tmux,
			stages.Tmux{Session: defaults.Tmux.Session, Socket: "/repo/run/tmux.sock"}},
		{"session with the issue's variables", "tmux: {session: \"{{project}}_{{issue_id}}_{{branch}}\"}\n", tmux,
			stages.Tmux{Session: "{{project}}_{{issue_id}}_{{branch}}"}},
		{"notify", "notify: {command: notify-send agenttree}\n", notify, stages.Notify{Command: "notify-send agenttree"}},
		{"notify with placeholders", "notify:\n  command: 'notify-send \"{{project}}: issue {{issue_id}} needs you\"'\n", notify,
			stages.Notify{Command: `notify-send "{{project}}: issue {{issue_id}} needs you"`}},
		{"polling defaults", "", polling, intervals(30, 30, 300)},
		{"min_interval_s", "ci_polling: {min_interval_s: 10}\n", polling, intervals(10, 30, 300)},
		{"all three", "ci_polling: {min_interval_s: 5, poll_interval_s: 20, max_interval_s: 100}\n", polling, intervals(5, 20, 100)},
		{"all equal", "ci_polling: {min_interval_s: 30, poll_interval_s: 30, max_interval_s: 30}\n", polling, intervals(30, 30, 30)},
		{"the default floor makes way for a lower first interval", "ci_polling: {poll_interval_s: 10}\n", polling, intervals(10, 10, 300)},
		{"the default first interval rises to the floor", "ci_polling: {min_interval_s: 60}\n", polling, intervals(60, 60, 300)},
		{"the default ceiling rises to the first interval", "ci_polling: {poll_interval_s: 600}\n", polling, intervals(30, 600, 600)},
		{"the defaults make way for a low ceiling", "ci_polling: {max_interval_s: 20}\n", polling, intervals(20, 20, 20)},
	}
	for _, tt := range tests {
		for _, form := range forms {
			t.Run(string(form)+"/"+tt.name, func(t *testing.T) {
				cfg, err := parseYAML(t, withSettings(form, tt.settings))
				require.NoError(t, err)
				assert.Empty(t, cfg.Warnings)
				assert.Equal(t, tt.want, tt.got(cfg))
			})
		}
	}
}

func controller(c *stages.Config) any { return c.Controller }
func breaker(c *stages.Config) any    { return c.CircuitBreaker }
func tmux(c *stages.Config) any       { return c.Tmux }
func notify(c *stages.Config) any     { return c.Notify }

func polling(c *stages.Config) any {
	return [3]time.Duration{c.CIPolling.MinInterval, c.CIPolling.PollInterval, c.CIPolling.MaxInterval}
}

func intervals(floor, start, ceiling int) [3]time.Duration {
	return [3]time.Duration{time.Duration(floor) * time.Second, time.Duration(start) * time.Second, time.Duration(ceiling) * time.Second}
}

// Each bad value is an error in either form, at the value, saying what
// is wrong and what to write instead.
func TestControllerSettingErrors(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		want     []string // every error, in order
	}{
		{"tick of zero", "controller: {interval_s: 0}\n",
			[]string{":1:26: error: controller.interval_s must be at least 1s, got 0s (use 1s or more)"}},
		{"tick under a second", "controller: {interval_s: 0.5}\n",
			[]string{":1:26: error: controller.interval_s must be at least 1s, got 500ms"}},
		{"tick not a duration", "controller: {interval_s: soon}\n",
			[]string{`:1:26: error: controller.interval_s: expected a duration (seconds, or like "90s", "5m"), got "soon"`}},
		{"no concurrency", "controller:\n  concurrency: 0\n",
			[]string{":2:16: error: controller.concurrency must be at least 1, got 0 (use 1 or more)"}},
		{"concurrency not a number", "controller:\n  concurrency: many\n",
			[]string{`:2:16: error: controller.concurrency: expected a whole number, got "many"`}},
		{"negative CI retries", "ci_polling: {max_retries: -2}\n",
			[]string{":1:27: error: ci_polling.max_retries must be at least 0, got -2 (use 0 or more)"}},
		{"concurrency quoted", "controller:\n  concurrency: \"4\"\n",
			[]string{`:2:16: error: controller.concurrency: expected a whole number, got "4" (write it without quotes: 4)`}},
		{"controller not a mapping", "controller: 10\n",
			[]string{":1:13: error: `controller` must be a mapping, got \"10\""}},
		{"half-open at zero", "circuit_breaker: {half_open_after: 0}\n",
			[]string{":1:36: error: circuit_breaker.half_open_after must be at least 1, got 0"}},
		{"no-progress threshold at zero", "circuit_breaker: {no_progress_threshold: 0}\n",
			[]string{":1:42: error: circuit_breaker.no_progress_threshold must be at least 1, got 0"}},
		{"same-error threshold at zero", "circuit_breaker: {same_error_threshold: 0}\n",
			[]string{":1:41: error: circuit_breaker.same_error_threshold must be at least 1, got 0"}},
		{"half-open after the breaker opens", "circuit_breaker:\n  half_open_after: 4\n  no_progress_threshold: 3\n",
			[]string{":2:20: error: circuit_breaker.half_open_after (4) is above no_progress_threshold (3) (the breaker half-opens before it opens)"}},
		{"empty session", "tmux: {session: \"\"}\n",
			[]string{":1:17: error: tmux.session is empty (leave it out for the default)"}},
		{"session with a dot", "tmux: {session: \"agents.{{issue_id}}\"}\n",
			[]string{":1:17: error: tmux.session \"agents.{{issue_id}}\" holds `:` or `.`, which tmux reads as separators (use `-` or `_` instead)"}},
		{"session with a colon", "tmux: {session: \"agents:{{issue_id}}\"}\n",
			[]string{"tmux.session \"agents:{{issue_id}}\" holds `:` or `.`"}},
		{"session with an unknown variable", "tmux: {session: \"{{projet}}-{{issue_id}}\"}\n",
			[]string{":1:17: error: tmux.session uses {{projet}}, which no hook or issue provides (did you mean `project`?)"}},
		{"session not a string", "tmux: {session: [a, b]}\n",
			[]string{":1:17: error: tmux.session: expected a string, got a list"}},
		{"empty socket", "tmux: {socket: \"\"}\n",
			[]string{":1:16: error: tmux.socket is empty (leave it out to use tmux's default server)"}},
		{"socket in the home directory", "tmux: {socket: ~/agents.sock}\n",
			[]string{":1:16: error: tmux.socket \"~/agents.sock\" starts with `~`, which is not expanded (write the path in full, or relative to the config file)"}},
		{"manager session with a placeholder", "tmux: {manager: \"{{project}}-boss\"}\n",
			[]string{":1:17: error: tmux.manager \"{{project}}-boss\" is the name of one session; it takes no {{placeholders}} (write the session's name as it is)"}},
		{"manager session with a dot", "tmux: {manager: boss.1}\n",
			[]string{":1:17: error: tmux.manager \"boss.1\" holds `:` or `.`"}},
		{"empty notify command", "notify: {command: \" \"}\n",
			[]string{":1:19: error: notify.command is empty (leave `notify` out to tell people by tmux and the log only)"}},
		{"notify command with an unknown variable", "notify: {command: \"notify-send {{isue_id}}\"}\n",
			[]string{":1:19: error: notify.command uses {{isue_id}}, which no hook or issue provides (did you mean `issue_id`?)"}},
		{"floor of zero", "ci_polling: {min_interval_s: 0}\n",
			[]string{":1:30: error: ci_polling.min_interval_s must be at least 1s, got 0s"}},
		{"floor above the first interval", "ci_polling:\n  min_interval_s: 40\n  poll_interval_s: 20\n",
			[]string{":2:19: error: ci_polling.min_interval_s (40s) is above poll_interval_s (20s)"}},
		{"floor above the default first interval", "ci_polling:\n  min_interval_s: 40\n  max_interval_s: 35\n",
			[]string{":2:19: error: ci_polling.min_interval_s (40s) is above max_interval_s (35s)"}},
		{"first interval above the ceiling", "ci_polling:\n  poll_interval_s: 400\n  max_interval_s: 300\n",
			[]string{":2:20: error: ci_polling.poll_interval_s (6m40s) is above max_interval_s (5m0s) (the interval starts at poll_interval_s and adapts between min_interval_s and max_interval_s)"}},
		{"all three out of order", "ci_polling: {min_interval_s: 60, poll_interval_s: 30, max_interval_s: 10}\n",
			[]string{"ci_polling.min_interval_s (1m0s) is above poll_interval_s (30s)", "ci_polling.poll_interval_s (30s) is above max_interval_s (10s)"}},
	}
	for _, tt := range tests {
		for _, form := range forms {
			t.Run(string(form)+"/"+tt.name, func(t *testing.T) {
				_, err := parseYAML(t, withSettings(form, tt.settings))
				containEach(t, errorStrings(t, err), tt.want)
			})
		}
	}
}

// A misspelt key is an error naming the key it may be in the list form,
// and a warning that it is ignored in the earlier tool's.
func TestControllerSettingUnknownKeys(t *testing.T) {
	tests := []struct {
		settings string
		at       string
		msg      string // as the list form words it
		hint     string
	}{
		{"controler: {}\n", "1:1", "unknown key `controler` in the top level", "did you mean `controller`?"},
		{"controller: {intervl_s: 3}\n", "1:14", "unknown key `intervl_s` in controller", "did you mean `interval_s`?"},
		{"circuit_breaker: {same_eror_threshold: 2}\n", "1:19", "unknown key `same_eror_threshold` in circuit_breaker", "did you mean `same_error_threshold`?"},
		{"tmux: {sesion: x}\n", "1:8", "unknown key `sesion` in tmux", "did you mean `session`?"},
		{"notify: {comand: x}\n", "1:10", "unknown key `comand` in notify", "did you mean `command`?"},
		{"ci_polling: {min_interval: 3}\n", "1:14", "unknown key `min_interval` in ci_polling", "did you mean `min_interval_s`?"},
	}
	for _, tt := range tests {
		t.Run("canonical/"+tt.msg, func(t *testing.T) {
			_, err := parseYAML(t, withSettings(stages.Canonical, tt.settings))
			assert.Equal(t, []string{"/repo/.agenttree.yaml:" + tt.at + ": error: " + tt.msg + " (" + tt.hint + ")"},
				diagStrings(diagnostics(t, err)))
		})
		t.Run("compatible/"+tt.msg, func(t *testing.T) {
			cfg, err := parseYAML(t, withSettings(stages.Compatible, tt.settings))
			require.NoError(t, err)
			assert.Equal(t, []string{"/repo/.agenttree.yaml:" + tt.at + ": warning: " + tt.msg + " is ignored (" + tt.hint + ")"},
				diagStrings(cfg.Warnings))
		})
	}
}

// The earlier tool's controller ticked at on.heartbeat.interval_s: in its
// form that is controller.interval_s, and the rest of `on` is ignored.
func TestEarlierToolHeartbeat(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		want     time.Duration
		warnings []string
		err      string
	}{
		{name: "the tick", settings: "on:\n  heartbeat:\n    interval_s: 5\n", want: 5 * time.Second},
		{name: "what it ran is ignored",
			settings: "on:\n  startup: [start_manager]\n  heartbeat:\n    interval_s: 15\n    actions: [sync]\n",
			want:     15 * time.Second,
			warnings: []string{
				":2:3: warning: unknown key `startup` in on is ignored (agenttree runs no hooks when its controller starts or stops)",
				":5:5: warning: unknown key `actions` in on.heartbeat is ignored (the controller's work each tick is its own)",
			}},
		{name: "with the controller's concurrency", settings: "controller: {concurrency: 2}\non: {heartbeat: {interval_s: 7}}\n", want: 7 * time.Second},
		{name: "controller.interval_s wins",
			settings: "on: {heartbeat: {interval_s: 7}}\ncontroller: {interval_s: 3}\n", want: 3 * time.Second,
			warnings: []string{":1:18: warning: on.heartbeat.interval_s is ignored (controller.interval_s at /repo/.agenttree.yaml:2:14 sets the tick)"}},
		{name: "no tick", settings: "on: {shutdown: [sync]}\n", want: 10 * time.Second,
			warnings: []string{":1:6: warning: unknown key `shutdown` in on is ignored"}},
		{name: "a bad tick", settings: "on: {heartbeat: {interval_s: 0}}\n",
			err: ":1:30: error: controller.interval_s must be at least 1s, got 0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseYAML(t, withSettings(stages.Compatible, tt.settings))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Controller.Interval)
			containEach(t, diagStrings(cfg.Warnings), tt.warnings)
		})
	}

	t.Run("the list form has no `on`", func(t *testing.T) {
		_, err := parseYAML(t, withSettings(stages.Canonical, "on: {heartbeat: {interval_s: 5}}\n"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), ":1:1: error: unknown key `on` in the top level")
	})
}

func TestSessionSharedByEveryIssueWarns(t *testing.T) {
	for _, form := range forms {
		cfg, err := parseYAML(t, withSettings(form, "tmux: {session: \"{{project}}-{{role}}\"}\n"))
		require.NoError(t, err)
		assert.Equal(t, []string{"/repo/.agenttree.yaml:1:17: warning: tmux.session \"{{project}}-{{role}}\" does not use {{issue_id}}: " +
			"the agents of different issues would share a session (add {{issue_id}}, as in the default `{{project}}-{{role}}-{{issue_id}}`)"},
			diagStrings(cfg.Warnings), form)
	}
}

// A relative socket is relative to the config file, wherever the loader
// runs.
func TestSocketRelativeToTheConfigFile(t *testing.T) {
	cfg, err := load.Parse("conf/.agenttree.yaml", []byte(withSettings(stages.Canonical, "tmux: {socket: ../run/tmux.sock}\n")), catalog())
	require.NoError(t, err)
	want, err := filepath.Abs("run/tmux.sock")
	require.NoError(t, err)
	assert.Equal(t, want, cfg.Tmux.Socket)
}
