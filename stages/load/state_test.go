package load_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

// tenNodes is state.nodes unwritten: off, at its default room.
var tenNodes = stages.Nodes{Capacity: 10}

func TestStateSettings(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		want     stages.State
		warning  string
	}{
		{"default: files", "", stages.State{Backend: stages.StateFiles, Nodes: tenNodes}, ""},
		{"etcd", "state:\n  backend: etcd\n  etcd:\n    endpoints: [https://etcd-1.example.com:2379, https://127.0.0.1:2379]\n    prefix: /agenttree/app/\n" +
			"    tls: {ca: etcd/ca.pem, cert: /etc/agenttree/client.pem, key: etcd/client-key.pem}\n",
			stages.State{Backend: stages.StateEtcd, Etcd: stages.Etcd{
				Endpoints: []string{"https://etcd-1.example.com:2379", "https://127.0.0.1:2379"}, Prefix: "/agenttree/app",
				TLS: stages.EtcdTLS{CA: "/repo/etcd/ca.pem", Cert: "/etc/agenttree/client.pem", Key: "/repo/etcd/client-key.pem"}}, Nodes: tenNodes},
			""},
		{"etcd over http", "state: {backend: etcd, etcd: {endpoints: [http://127.0.0.1:2379, http://127.0.0.1:2381]}}\n",
			stages.State{Backend: stages.StateEtcd, Etcd: stages.Etcd{Endpoints: []string{"http://127.0.0.1:2379", "http://127.0.0.1:2381"}}, Nodes: tenNodes}, ""},
		{"etcd over https, the system's CAs", "state: {backend: etcd, etcd: {endpoints: [https://e:2379]}}\n",
			stages.State{Backend: stages.StateEtcd, Etcd: stages.Etcd{Endpoints: []string{"https://e:2379"}}, Nodes: tenNodes}, ""},
		{"etcd's keys with files", "state:\n  etcd: {endpoints: [http://127.0.0.1:2379]}\n",
			stages.State{Backend: stages.StateFiles, Etcd: stages.Etcd{Endpoints: []string{"http://127.0.0.1:2379"}}, Nodes: tenNodes},
			":2:9: warning: state.etcd is not read: the state is kept in files"},
		{"nodes", "state: {backend: etcd, etcd: {endpoints: [http://127.0.0.1:2379]}, nodes: {capacity: 3}}\n",
			stages.State{Backend: stages.StateEtcd, Etcd: stages.Etcd{Endpoints: []string{"http://127.0.0.1:2379"}}, Nodes: stages.Nodes{On: true, Capacity: 3}}, ""},
		{"nodes, their default room", "state: {backend: etcd, etcd: {endpoints: [http://127.0.0.1:2379]}, nodes: {}}\n",
			stages.State{Backend: stages.StateEtcd, Etcd: stages.Etcd{Endpoints: []string{"http://127.0.0.1:2379"}}, Nodes: stages.Nodes{On: true, Capacity: 10}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseYAML(t, withSettings(stages.Canonical, tt.settings))
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.State)
			if tt.warning == "" {
				assert.Empty(t, cfg.Warnings)
				return
			}
			require.Len(t, cfg.Warnings, 1)
			assert.Contains(t, cfg.Warnings[0].String(), tt.warning)
		})
	}
}

// Each mistake is named where it is written, with what to write instead.
func TestStateSettingsRefused(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		want     string
	}{
		{"unknown backend", "state: {backend: consul}\n", "/repo/.agenttree.yaml:1:18: error: unknown state.backend \"consul\" (use `files` or `etcd`)"},
		{"etcd without endpoints", "state:\n  backend: etcd\n", "/repo/.agenttree.yaml:2:12: error: state.backend etcd needs state.etcd.endpoints"},
		{"nodes over files", "state:\n  nodes: {capacity: 2}\n", "/repo/.agenttree.yaml:2:10: error: state.nodes needs the state in etcd: nodes on other hosts share it there"},
		{"no room", "state: {backend: etcd, etcd: {endpoints: [http://e:2379]}, nodes: {capacity: 0}}\n", "capacity"},
		{"a key without its certificate", "state:\n  backend: etcd\n  etcd:\n    endpoints: [https://e:2379]\n    tls:\n      ca: ca.pem\n      key: k.pem\n",
			"/repo/.agenttree.yaml:6:7: error: state.etcd.tls has a client certificate without its key, or a key without its certificate"},
		{"certificates for http endpoints", "state:\n  backend: etcd\n  etcd:\n    endpoints: [http://e:2379]\n    tls: {ca: ca.pem, cert: c.pem, key: k.pem}\n",
			"/repo/.agenttree.yaml:5:10: error: state.etcd.tls is given, but the endpoints are http://: it would not be used"},
		{"http and https", "state:\n  backend: etcd\n  etcd:\n    endpoints: [https://e1:2379, http://e2:2379]\n",
			"/repo/.agenttree.yaml:4:16: error: state.etcd.endpoints mix http and https"},
		{"an endpoint without a scheme", "state:\n  backend: etcd\n  etcd:\n    endpoints:\n      - http://127.0.0.1:2379\n      - etcd-2:2379\n",
			"/repo/.agenttree.yaml:6:9: error: bad state.etcd.endpoints \"etcd-2:2379\": want http(s)://HOST:PORT"},
		{"an endpoint without a port", "state: {backend: etcd, etcd: {endpoints: [https://etcd.example.com]}}\n",
			"/repo/.agenttree.yaml:1:43: error: bad state.etcd.endpoints \"https://etcd.example.com\""},
		{"a relative prefix", "state: {etcd: {prefix: agenttree}}\n", "/repo/.agenttree.yaml:1:24: error: bad state.etcd.prefix \"agenttree\""},
		{"the root as prefix", "state: {etcd: {prefix: /}}\n", "/repo/.agenttree.yaml:1:24: error: bad state.etcd.prefix \"/\""},
		{"a certificate without its key", "state:\n  backend: etcd\n  etcd:\n    endpoints: [https://e:2379]\n    tls: {cert: c.pem}\n",
			"/repo/.agenttree.yaml:5:10: error: state.etcd.tls has a client certificate without its key"},
		{"a path from home", "state: {etcd: {tls: {ca: ~/ca.pem}}}\n", "/repo/.agenttree.yaml:1:26: error: state.etcd.tls.ca \"~/ca.pem\" starts with `~`"},
		{"an unknown key", "state: {etcd: {endpoint: [http://e:2379]}}\n", "/repo/.agenttree.yaml:1:16: error: "},
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

// With state.nodes, a controller's create_pr needs a stage of the agents
// that pushes the branch (a hook that says it Pushes), said at create_pr.
func TestNodesNeedTheAgentsToPushTheirBranch(t *testing.T) {
	nodes := "state: {backend: etcd, etcd: {endpoints: [http://127.0.0.1:2379]}, nodes: {}}\n"
	pipeline := testpipeline.Read(t, "controller-merges")
	_, err := parseYAML(t, pipeline+nodes)
	require.Error(t, err)
	got := diagStrings(diagnostics(t, err))
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "error: `create_pr` in pr_ready pushes the issue's branch from the controller's host, but with state.nodes the agent's commits are on its node")
	assert.Contains(t, got[0], "add `- push_branch:` to the pre_completion of the agent's stage that hands the issue over")

	pushed := strings.Replace(pipeline, "          - has_commits:\n", "          - has_commits:\n          - push_branch:\n", 1)
	require.NotEqual(t, pipeline, pushed)
	cfg, err := parseYAML(t, pushed+nodes)
	require.NoError(t, err)
	assert.Empty(t, cfg.Warnings)
	_, err = parseYAML(t, pipeline)
	require.NoError(t, err, "without nodes the controller's host has the branch")

	// Each flow must push before its create_pr: one that skips the stage
	// that pushes is refused, naming the flow.
	inCode := strings.Replace(pipeline, "      - name: code\n", "      - name: code\n        pre_completion:\n          - push_branch:\n", 1)
	require.NotEqual(t, pipeline, inCode)
	_, err = parseYAML(t, inCode+nodes)
	require.NoError(t, err, "the default flow pushes at implement.code")
	quick := "flows:\n  quick: [backlog, implement.feedback, pr_ready, implementation_review, accepted]\n"
	_, err = parseYAML(t, inCode+nodes+quick)
	require.Error(t, err)
	assert.Contains(t, diagStrings(diagnostics(t, err))[0], "no stage of the agents before it in flow quick pushes them")
}
