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
