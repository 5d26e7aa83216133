package cmdutil

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

func TestExactArgsSaysWhatIsMissing(t *testing.T) {
	root := &cobra.Command{Use: "agenttree"}
	move := &cobra.Command{Use: "move ID STAGE --reason TEXT", Args: ExactArgs(2)}
	create := &cobra.Command{Use: "create TITLE", Args: ExactArgs(1)}
	root.AddCommand(move, create)
	tests := []struct {
		cmd  *cobra.Command
		args []string
		want string
	}{
		{move, nil, "which issue? name it: `agenttree move ID STAGE --reason TEXT` (`agenttree status` lists them)"},
		{move, []string{"1"}, "agenttree move needs STAGE: `agenttree move ID STAGE --reason TEXT`"},
		{move, []string{"1", "a", "b"}, "agenttree move takes ID and STAGE, and was given 3 arguments: `agenttree move ID STAGE --reason TEXT` (quote a value that holds spaces)"},
		{create, nil, "agenttree create needs TITLE: `agenttree create TITLE`"},
	}
	for _, tt := range tests {
		err := tt.cmd.Args(tt.cmd, tt.args)
		if assert.Error(t, err) {
			assert.Equal(t, tt.want, err.Error())
		}
	}
	assert.NoError(t, move.Args(move, []string{"1", "done"}))
}

func TestRangeArgsSaysWhatIsMissing(t *testing.T) {
	root := &cobra.Command{Use: "agenttree"}
	send := &cobra.Command{Use: "send ID MESSAGE...", Args: MinimumNArgs(2)}
	status := &cobra.Command{Use: "status [ID]", Args: MaximumNArgs(1)}
	pick := &cobra.Command{Use: "pick ID STAGE [NOTE]", Args: RangeArgs(2, 3)}
	root.AddCommand(send, status, pick)
	tests := []struct {
		cmd  *cobra.Command
		args []string
		want string
	}{
		{send, nil, "which issue? name it: `agenttree send ID MESSAGE...` (`agenttree status` lists them)"},
		{send, []string{"2"}, "agenttree send needs MESSAGE: `agenttree send ID MESSAGE...`"},
		{status, []string{"1", "2"}, "agenttree status takes at most 1 argument ([ID]), and was given 2 arguments: `agenttree status [ID]` (quote a value that holds spaces)"},
		{pick, []string{"1"}, "agenttree pick needs STAGE: `agenttree pick ID STAGE [NOTE]`"},
		{pick, []string{"1", "a", "b", "c"}, "agenttree pick takes at most 3 arguments (ID STAGE [NOTE]), and was given 4 arguments: `agenttree pick ID STAGE [NOTE]` (quote a value that holds spaces)"},
	}
	for _, tt := range tests {
		err := tt.cmd.Args(tt.cmd, tt.args)
		if assert.Error(t, err, "%s %v", tt.cmd.Use, tt.args) {
			assert.Equal(t, tt.want, err.Error())
		}
	}
	assert.NoError(t, send.Args(send, []string{"2", "hello", "there"}))
	assert.NoError(t, status.Args(status, nil))
	assert.NoError(t, pick.Args(pick, []string{"1", "a"}))
	assert.NoError(t, pick.Args(pick, []string{"1", "a", "b"}))
}
