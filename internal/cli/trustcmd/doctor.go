package trustcmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/internal/cli/cmdutil"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/identity"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/stages"
)

// Deployment is how agents are kept apart from the state (docs/SECURITY.md).
type Deployment string

const (
	DeployContainers Deployment = "containers"
	DeployOtherUser  Deployment = "another OS user"
	DeploySameUser   Deployment = "same user"
)

// finding is one thing doctor checked.
type finding struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// DoctorReport is what `doctor --json` prints: the deployment, and each
// check of it.
type DoctorReport struct {
	StateDir   string     `json:"state_dir"`
	Owner      string     `json:"owner"`
	You        string     `json:"you"`
	Person     bool       `json:"person"`
	Deployment Deployment `json:"deployment"`
	Guarantees string     `json:"guarantees"`
	Findings   []finding  `json:"findings"`
}

func (a cmds) doctorCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Say which trust deployment this repository is in, what it guarantees, and what is wrong",
		Example: `  agenttree doctor
  agenttree doctor --json`,
		Long: "Say who you are to agenttree (a person or an agent, and why), which deployment the\n" +
			"repository's agents are in (containers, another OS user, or the same user: advisory),\n" +
			"what that guarantees (docs/SECURITY.md), and check the state directory's permissions,\n" +
			"the controller's socket and every issue's event chain.\n\n" +
			"Exit status: 0 nothing wrong, 1 something to fix (each with how).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := a.doctor()
			if err != nil {
				return err
			}
			if asJSON {
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
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func (a cmds) doctor() (*DoctorReport, error) {
	stateDir, err := a.StateDir()
	if err != nil {
		return nil, err
	}
	layout := statedir.Layout{Root: stateDir}
	owner, err := identity.Owner(stateDir)
	if err != nil {
		return nil, err
	}
	rep := &DoctorReport{StateDir: stateDir, Owner: userName(owner), You: userName(os.Getuid())}
	why := a.OSAgent(stateDir)
	rep.Person = why == ""
	if !rep.Person {
		rep.You += " — an agent: " + why
	}
	var found []finding
	rep.Deployment, rep.Guarantees, found = a.deployment(stateDir)
	rep.Findings = append(found, hostPermissions(layout)...)
	rep.Findings = append(rep.Findings, socketFinding(layout))
	return rep, nil
}

// deployment says how this repository's agents are kept from the state:
// the config's `sandbox:`, or this process being in an agent's container.
func (a cmds) deployment(stateDir string) (Deployment, string, []finding) {
	if in, why := identity.InContainer(); in && a.OSAgent(stateDir) != "" {
		return DeployContainers, "this process is in an agent's container (" + why + "): it reaches the state only through the controller's socket", nil
	}
	cfg, _, err := a.LoadConfig()
	if err != nil {
		return DeploySameUser, advisory, []finding{{Check: "config", Detail: err.Error(), Fix: "fix the config (`agenttree validate`)"}}
	}
	switch cfg.Sandbox.Kind {
	case stages.SandboxUser:
		return DeployOtherUser, "enforced: agents run as " + cfg.Sandbox.Name + ", who can write the stage documents " +
			"and nothing else of the state; their commands are requests to the controller, which holds them to the " +
			"repository's config, their session's issue and role", []finding{agentUserFinding(cfg.Sandbox.Name, stateDir)}
	case stages.SandboxDocker, stages.SandboxPodman:
		return DeployContainers, "enforced: agents run in " + cfg.Sandbox.String() + " containers that get their worktree, " +
			"their documents and the controller's socket, nothing else of the state", nil
	}
	return DeploySameUser, advisory, nil
}

const advisory = "advisory: agents that run as the state directory's owner can write its files. " +
	"The engine holds their commands to the rules (an agent cannot approve, leave a review, move a controller stage, " +
	"act on another issue, or name another config), and the hash chain of every issue's events catches a hand edit " +
	"(`agenttree verify`), but a process of that user that sets no agent variables, or recomputes the chain, is not " +
	"stopped. Set `sandbox: user:NAME` (agents as another OS user) or run them in containers to enforce it (docs/SECURITY.md)"

// agentUserFinding checks that the agents' OS user exists, is not the
// state's owner, and is in the state directory's group (to write the
// stage documents).
func agentUserFinding(name, stateDir string) finding {
	f := finding{Check: "agents' OS user " + name}
	u, err := user.Lookup(name)
	if err != nil {
		f.Detail, f.Fix = err.Error(), "create it: useradd --create-home "+name
		return f
	}
	owner, _ := identity.Owner(stateDir)
	if u.Uid == strconv.Itoa(owner) {
		f.Detail, f.Fix = name+" owns the state directory: it is a person to agenttree", "run agents as a user that does not own "+stateDir
		return f
	}
	gid, err := identity.Group(stateDir)
	if err != nil {
		f.Detail = err.Error()
		return f
	}
	groups, _ := u.GroupIds()
	if !slices.Contains(groups, strconv.Itoa(gid)) {
		f.Detail = fmt.Sprintf("%s is not in group %d of %s: it cannot write its stage documents", name, gid, stateDir)
		f.Fix = fmt.Sprintf("usermod -aG %d %s", gid, name)
		return f
	}
	f.OK, f.Detail = true, fmt.Sprintf("uid %s, in the state directory's group %d", u.Uid, gid)
	return f
}

// hostPermissions checks that only the owner can write the host's files.
func hostPermissions(l statedir.Layout) []finding {
	var writable []string
	err := filepath.WalkDir(l.Host(), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		if fi.Mode().Type() == 0 || fi.IsDir() {
			if fi.Mode().Perm()&0o022 != 0 {
				writable = append(writable, path)
			}
		}
		return nil
	})
	f := finding{Check: "host files written by the host only", OK: true, Detail: l.Host() + ": no file or directory others can write"}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.Detail = l.Host() + " does not exist yet (made with the first issue)"
	case err != nil:
		f.OK, f.Detail = false, err.Error()
	case len(writable) > 0:
		f.OK = false
		f.Detail = fmt.Sprintf("%d paths others can write, first %s", len(writable), writable[0])
		f.Fix = "chmod -R go-w " + l.Host()
	}
	return []finding{f}
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

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

func (a cmds) printDoctor(rep *DoctorReport) {
	fmt.Fprintf(a.Out, "state directory: %s, owned by %s\n", rep.StateDir, rep.Owner)
	who := "a person"
	if !rep.Person {
		who = "an agent"
	}
	fmt.Fprintf(a.Out, "you:             %s — %s\n", rep.You, who)
	fmt.Fprintf(a.Out, "deployment:      %s\n  %s\n\n", rep.Deployment, rep.Guarantees)
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
