package trustcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/identity"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/stages"
)

// finding is one thing doctor checked.
type finding struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Path is the file or directory found, if one is.
	Path string `json:"path,omitempty"`
}

// DoctorReport is what `doctor --json` prints: who runs it, the
// deployment, and each check of it.
type DoctorReport struct {
	StateDir string `json:"state_dir"`
	Owner    string `json:"owner"`
	You      string `json:"you"`
	Person   bool   `json:"person"`
	// Agent says what makes this process an agent, if it is one.
	Agent []string `json:"agent,omitempty"`
	// Deployment is the caller's own when it is an agent, else the one
	// the repository's config gives its agents (Configured).
	Deployment Deployment `json:"deployment"`
	Configured Deployment `json:"configured,omitempty"`
	Guarantees string     `json:"guarantees"`
	Findings   []finding  `json:"findings"`
	// Fixed is what `doctor --fix` changed; NotFixed what it could not.
	Fixed    []string `json:"fixed,omitempty"`
	NotFixed []string `json:"not_fixed,omitempty"`
	fixed    bool     // --fix ran
}

// DoctorOptions is what `doctor` was asked.
type DoctorOptions struct {
	*cmdutil.App
	// Fix makes the setup doctor describes.
	Fix, JSON bool
}

func newCmdDoctor(a *cmdutil.App, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{App: a}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Say which trust deployment this repository is in, what it guarantees, and what is wrong",
		Example: `  agenttree doctor
  agenttree doctor --json
  agenttree doctor --fix   # as the state directory's owner, or root`,
		Long: "Say who you are to agenttree (a person or an agent, and why), which deployment you are in\n" +
			"(an agent: its own; a person: the one the repository's config gives its agents: containers,\n" +
			"another OS user, or the same user: advisory), what that guarantees (docs/SECURITY.md), and\n" +
			"check who may write each directory on the way to the host's files and the repository's .git,\n" +
			"the agents' OS user, the controller's socket.\n\n" +
			"--fix (people only) makes that setup: the group and world write bits off what of the state\n" +
			"directory, host/ and .git you or root own, and off the directories above it you own (never\n" +
			"another user's); the state directory and issues/ where missing; with `sandbox: user:NAME`,\n" +
			"NAME (as root) and its group for the stage documents. It prints what it changed; run again,\n" +
			"it changes nothing.\n\n" +
			cmdutil.ExitStatus("0 nothing wrong, 1 something to fix (each with how), 3 --fix run by an agent"),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return doctorRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&opts.Fix, "fix", false, "make the setup doctor describes (people only)")
	return cmd
}

func doctorRun(ctx context.Context, opts *DoctorOptions) error {
	a := cmds{opts.App}
	rep, err := a.doctor(opts.Fix)
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := a.PrintJSON(rep); err != nil {
			return err
		}
	} else {
		a.printDoctor(rep)
	}
	for _, f := range rep.Findings {
		if !f.OK {
			return cmdutil.SilentExit(exitcode.Blocked)
		}
	}
	return nil
}

func (a cmds) doctor(doFix bool) (*DoctorReport, error) {
	stateDir, err := a.StateDir()
	if err != nil {
		return nil, err
	}
	layout := statedir.Layout{Root: stateDir}
	owner, err := identity.Owner(stateDir)
	if err != nil {
		return nil, err
	}
	who := a.whoCalls(stateDir, owner)
	if doFix && !who.person() {
		return nil, &cmdutil.ExitError{Code: exitcode.Waiting, Err: errors.New("doctor --fix is for people, and this process is an agent: " +
			strings.Join(who.why, "; ") + "; a person (the state directory's owner, or root) runs it")}
	}
	cfg, _, cfgErr := a.LoadConfig()
	sandbox := ""
	if cfgErr == nil && cfg.Sandbox.Kind == stages.SandboxUser {
		sandbox = cfg.Sandbox.Name
	}
	rep := &DoctorReport{StateDir: stateDir, Owner: statedir.UserName(owner), You: statedir.UserName(os.Getuid()),
		Person: who.person(), Agent: who.why, fixed: doFix}
	if doFix {
		f := fix(layout, owner, sandbox)
		rep.Fixed, rep.NotFixed = f.changed, f.failed
	}
	switch {
	case cfgErr != nil:
		rep.Configured, rep.Guarantees = DeploySameUser, advisory
		rep.Findings = append(rep.Findings, finding{Check: "config", Detail: cfgErr.Error(), Fix: "fix the config (`agenttree validate`)"})
	default:
		rep.Configured, rep.Guarantees = configured(cfg)
		if sandbox != "" {
			rep.Findings = append(rep.Findings, agentUserFinding(sandbox, layout, owner))
		}
	}
	rep.Deployment = rep.Configured
	if !who.person() {
		rep.Deployment, rep.Guarantees = who.deployment, who.guarantees(sandbox)
	}
	if who.deployment == DeployContainers {
		// A container has its worktree, documents and socket, none of
		// the host's directories to check.
		return rep, nil
	}
	perms := permissionFindings(layout, owner)
	rep.Findings = append(rep.Findings, perms...)
	rep.Findings = append(rep.Findings, leftoverFinding(layout), socketFinding(layout))
	if rep.Deployment != DeploySameUser && slices.ContainsFunc(perms, func(f finding) bool { return !f.OK }) {
		rep.Guarantees = "NOT while what is marked FAIL below stands (others may write what only the host should); then " + rep.Guarantees
	}
	return rep, nil
}

// leftoverFinding names what of the first layout is still outside host/
// once the state directory has the current layout: never adopted, and
// possibly planted.
func leftoverFinding(l statedir.Layout) finding {
	f := finding{Check: "no first-layout files outside host/", OK: true, Detail: "none"}
	left := l.FirstLayoutLeftovers()
	if len(left) > 0 {
		f.OK, f.Path = false, left[0]
		f.Detail = fmt.Sprintf("%d files of the first layout beside the documents, never adopted as the host's: %s; "+
			"if they are not yours, an agent may have put them there", len(left), strings.Join(left, ", "))
		f.Fix = "check them, then remove them or set them aside; one of yours goes under host/ by hand, an issue's then with `agenttree repair ID --adopt`"
	}
	return f
}

func socketFinding(l statedir.Layout) finding {
	f := finding{Check: "controller answering agents", OK: true}
	holder, running := controller.Running(l.Root)
	conn, err := api.Dial(context.Background(), l.Socket())
	if err == nil {
		conn.Close()
	}
	switch {
	case running && err == nil:
		f.Detail = fmt.Sprintf("on %s (%s)", l.Socket(), holder)
	case running:
		f.OK, f.Detail = false, fmt.Sprintf("a controller runs (%s) but %s does not answer: %v", holder, l.Socket(), err)
		f.Fix = "restart the controller"
	default:
		// Not a fault: agents of the same user need none for agent stages.
		f.Detail = "no controller runs: agents of another OS user or in containers are refused until a person starts `agenttree controller`"
	}
	return f
}

func (a cmds) printDoctor(rep *DoctorReport) {
	for _, line := range rep.Fixed {
		fmt.Fprintln(a.Out, "fixed: "+line)
	}
	for _, line := range rep.NotFixed {
		fmt.Fprintln(a.Out, "not fixed: "+line)
	}
	if rep.fixed && len(rep.Fixed) == 0 {
		fmt.Fprintln(a.Out, "fixed: nothing (nothing --fix changes was wrong)")
	}
	if rep.fixed {
		fmt.Fprintln(a.Out)
	}
	fmt.Fprintf(a.Out, "state directory: %s, owned by %s\n", rep.StateDir, rep.Owner)
	if rep.Person {
		fmt.Fprintf(a.Out, "you:             %s — a person\n", rep.You)
		fmt.Fprintf(a.Out, "deployment:      %s (the repository's agents')\n  %s\n\n", rep.Deployment, rep.Guarantees)
	} else {
		fmt.Fprintf(a.Out, "you:             %s — an agent: %s\n", rep.You, strings.Join(rep.Agent, "; "))
		fmt.Fprintf(a.Out, "deployment:      %s (yours; the repository's config says %s)\n  %s\n\n", rep.Deployment, rep.Configured, rep.Guarantees)
	}
	for _, f := range rep.Findings {
		mark := "ok  "
		if !f.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(a.Out, "%s %s: %s\n", mark, f.Check, f.Detail)
		if f.Fix != "" {
			fmt.Fprintf(a.Out, "     fix: %s\n", f.Fix)
		}
	}
}
