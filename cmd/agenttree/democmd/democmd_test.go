package democmd

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil/cmdtest"
	"github.com/agenttree/agenttree/cmd/agenttree/democmd/demo"
)

// The runs play the whole story with the built binary; the end-to-end
// tests in cmd/agenttree run them (TestDemo...). These check what the
// flags ask of them.
func TestNewCmdDemo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want demo.Options
		err  string
	}{
		{name: "defaults", want: demo.Options{Timeout: 3 * time.Minute}},
		{name: "every flag", args: []string{"--keep", "--fast", "--timeout", "30s"}, want: demo.Options{Keep: true, Fast: true, Timeout: 30 * time.Second}},
		{name: "an argument", args: []string{"x"}, err: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cmdtest.Options(newCmdDemo, tt.args...)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Demo)
		})
	}
}

func TestNewCmdDemoAgent(t *testing.T) {
	got, err := cmdtest.Options(newCmdDemoAgent)
	require.NoError(t, err)
	assert.Equal(t, &DemoAgentOptions{Base: "main"}, got)
	got, err = cmdtest.Options(newCmdDemoAgent, "--base", "trunk")
	require.NoError(t, err)
	assert.Equal(t, &DemoAgentOptions{Base: "trunk"}, got)
}
