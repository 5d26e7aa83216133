package sessioncmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/sessions/tokens"
	"github.com/agenttree/agenttree/stages"
)

// TokenOptions is what `token` was asked.
type TokenOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given.
	IssueArg string
	Role     string
	JSON     bool
}

func newCmdToken(a *cmdutil.App, runF func(context.Context, *TokenOptions) error) *cobra.Command {
	opts := &TokenOptions{App: a}
	cmd := &cobra.Command{
		Use:   "token ID --role ROLE",
		Short: "Make a session token for an agent working on issue ID in ROLE (people only)",
		Long: "Make a session token: an agent whose environment has it as AGENTTREE_TOKEN acts, through\n" +
			"the controller, on issue ID only and in ROLE only. `agenttree start` makes one for each\n" +
			"session it starts; this is for agents started by other means. Only its hash is stored.",
		Example: "  AGENTTREE_TOKEN=$(agenttree token 3 --role developer) my-agent",
		Args:    cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IssueArg = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return tokenRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Role, "role", string(stages.RoleDeveloper), "the agent's role")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

func tokenRun(ctx context.Context, opts *TokenOptions) error {
	a := opts.App
	if err := a.ForPeople("session tokens are made by people; %s cannot"); err != nil {
		return err
	}
	e, id, err := a.EngineFor(ctx, opts.IssueArg)
	if err != nil {
		return err
	}
	iss, err := e.Store.Get(id)
	if err != nil {
		return err
	}
	r := stages.Role(opts.Role)
	if !r.Agent() {
		return &cmdutil.ExitError{Code: exitcode.Usage, Err: errors.New("--role names an agent's role (developer, reviewer, ...)")}
	}
	token, err := tokens.Open(e.Store.Root()).Mint(iss.ID, r)
	if err != nil {
		return err
	}
	if opts.JSON {
		return a.PrintJSON(map[string]any{"token": token, "issue": iss.ID, "role": r})
	}
	fmt.Fprintln(a.Out, token)
	return nil
}
