package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/stages"
)

// Where a container finds what it gets of the host: its clone (its
// working directory), its issue's documents and the controller's socket.
const (
	containerWork = "/work"
	// ContainerOrigin is where a container finds the host's repository
	// (its git directory), read-only: the origin of the agent's clone.
	ContainerOrigin = "/agenttree/origin"
	containerDocs   = "/agenttree/docs"
	containerRun    = "/agenttree/run"
	containerSocket = containerRun + "/controller.sock"
	containerToken  = "/agenttree/token"
)

// passedByName are the variables a container takes from the pane's
// environment by name (`-e NAME`). The token is in neither: the container
// reads it from its token file, mounted read-only.
var passedByName = []string{"AGENTTREE_ISSUE", "AGENTTREE_ROLE"}

// inspectTimeout bounds the check that the image is here: a runtime whose
// daemon hangs must not hang `agenttree start`.
const inspectTimeout = 30 * time.Second

// box is the container an agent runs in and what of the host it gets.
type box struct {
	runtime stages.SandboxKind // docker or podman
	image   string
	// name is the container's, made of the tmux session's.
	name string
	// docs and socket are the host's issue documents and controller
	// socket, token the file of the session's token, origin the host
	// repository's git directory (empty: not mounted).
	docs, socket, token, origin string
	// command is the agent's command, run by the image's sh.
	command string
}

// argv runs b's command in a new container with the worktree at dir as
// its working directory. Each value is an argument of its own: the
// command reaches the container's sh -c as one argument, never spliced
// into text.
func (b *box) argv(dir string) []string {
	argv := []string{string(b.runtime), "run", "--rm", "-i", "-t", "--name", b.name,
		"-v", dir + ":" + containerWork, "-w", containerWork}
	if b.origin != "" {
		// Read-only: the agent fetches from it and writes nothing of the
		// host's (its object store, its refs).
		argv = append(argv, "-v", b.origin+":"+ContainerOrigin+":ro")
	}
	argv = append(argv,
		"-v", b.docs+":"+containerDocs,
		// The socket's directory, not the socket: a restarted controller's
		// new socket is seen there.
		"-v", filepath.Dir(b.socket)+":"+containerRun,
		"-e", "AGENTTREE_SOCKET="+containerSocket)
	if b.token != "" {
		argv = append(argv, "-v", b.token+":"+containerToken+":ro", "-e", "AGENTTREE_TOKEN_FILE="+containerToken)
	}
	for _, name := range passedByName {
		argv = append(argv, "-e", name)
	}
	return append(argv, b.image, "sh", "-c", b.command)
}

// containerName is the container of tmux session session: what of the
// session's name a container name may hold ([a-zA-Z0-9_.-]), each other
// character a '-'.
func containerName(session string) string {
	return "agenttree-" + strings.Map(func(r rune) rune {
		if r == '_' || r == '.' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '-'
	}, session)
}

// checkImage checks that sandbox's runtime is installed and has its
// image here: an image the runtime would pull at launch is a download
// nobody asked for, and one that is nowhere fails in the pane, where no
// one reads it.
func checkImage(ctx context.Context, sandbox stages.Sandbox) error {
	runtime := string(sandbox.Kind)
	if strings.HasPrefix(sandbox.Name, "-") {
		return fmt.Errorf("%w: sandbox %s: an image name cannot start with '-'; fix `sandbox:` in the config", ErrUnavailable, sandbox)
	}
	if _, err := exec.LookPath(runtime); err != nil {
		return fmt.Errorf("%w: sandbox %s: %s is not installed (%w); install docker or podman, or set `sandbox: none`", ErrUnavailable, sandbox, runtime, err)
	}
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, runtime, "image", "inspect", "--format", "{{.Id}}", sandbox.Name)
	proc.Group(cmd)
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	switch said := strings.Join(lines.Last(stderr.String(), 1), ""); {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%w: sandbox %s: `%s image inspect %s` did not answer within %s; is %s working (`%s info`)?",
			ErrUnavailable, sandbox, runtime, sandbox.Name, inspectTimeout, runtime, runtime)
	case noSuchImage(said):
		return fmt.Errorf("%w: sandbox %s: there is no image %s here; pull it: %s pull %s", ErrUnavailable, sandbox, sandbox.Name, runtime, sandbox.Name)
	case said != "":
		return fmt.Errorf("%w: sandbox %s: cannot tell whether image %s is here: %s image inspect: %s", ErrUnavailable, sandbox, sandbox.Name, runtime, said)
	}
	return fmt.Errorf("%w: sandbox %s: cannot tell whether image %s is here: %s image inspect: %w", ErrUnavailable, sandbox, sandbox.Name, runtime, err)
}

// noSuchImage reports whether a runtime's error says the image is not
// here: docker's "No such image: X", podman's "X: image not known".
func noSuchImage(said string) bool {
	said = strings.ToLower(said)
	return strings.Contains(said, "no such image") || strings.Contains(said, "image not known")
}

// checkMount checks that path can be bind-mounted as what: it exists
// (docker would make a missing one, as root, in the state directory),
// is a socket when socket says so, and holds no ':', which -v reads as
// the end of the host's path.
func checkMount(what, path string, socket bool) error {
	if strings.Contains(path, ":") {
		return fmt.Errorf("%w: cannot mount %s %s in a container: its path holds a ':'; move it", ErrUnavailable, what, path)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && socket:
		return fmt.Errorf("%w: no controller socket at %s: an agent in a container reaches agenttree only through it; start the controller first (`agenttree controller`)", ErrUnavailable, path)
	case err != nil:
		return fmt.Errorf("%w: cannot mount %s in a container: %w", ErrUnavailable, what, err)
	case socket && fi.Mode().Type() != fs.ModeSocket:
		return fmt.Errorf("%w: %s is not the controller's socket (%s); restart the controller (`agenttree controller`)", ErrUnavailable, path, fi.Mode().Type())
	}
	return nil
}

// RemoveContainer removes the container of tmux session session, if it
// ran in one (sandbox is where it ran, stages.Sandbox's text): killing the tmux session kills the runtime's client, and with a
// terminal (-t) the container may go on, holding its name for the next
// start. Best effort: a container already gone is what is wanted.
func RemoveContainer(ctx context.Context, sandbox, session string) {
	runtime, _, ok := strings.Cut(sandbox, ":")
	if !ok || (runtime != string(stages.SandboxDocker) && runtime != string(stages.SandboxPodman)) {
		return
	}
	if _, err := exec.LookPath(runtime); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	_ = exec.CommandContext(ctx, runtime, "rm", "-f", containerName(session)).Run()
}

// Box is the container sandbox an agent runs in, as its session's record
// names it (stages.Sandbox's text, "docker:IMAGE"): where the host runs
// git on the agent's clone. Whatever the container writes there (the
// clone's config, hooks, alternates, symlinks) is the agent's: git the
// host ran there would run the agent's hooks and follow its pointers to
// the host's files, so the host's git never runs in it. What the host
// must ask of the clone, it asks git in a throwaway container of the
// agent's own image that gets the clone alone, read-only, and no network
// (docs/SECURITY.md, "Agents in containers").
type Box struct {
	Runtime stages.SandboxKind // docker or podman
	Image   string
}

// ContainerOf is the container sandbox names; false when it names none.
func ContainerOf(sandbox string) (Box, bool) {
	runtime, image, ok := strings.Cut(sandbox, ":")
	kind := stages.SandboxKind(runtime)
	if !ok || image == "" || (kind != stages.SandboxDocker && kind != stages.SandboxPodman) {
		return Box{}, false
	}
	return Box{Runtime: kind, Image: image}, true
}

func (b Box) String() string { return string(b.Runtime) + ":" + b.Image }

// UploadPack is the argv that serves a fetch from the clone at dir
// (gitx.FetchUntrusted, which adds dir as the last argument): git's
// upload-pack in a throwaway container, with the clone at the same path
// as on the host, so that the path git adds names it there.
func (b Box) UploadPack(dir string) ([]string, error) {
	argv, err := b.run(dir, dir, "-i")
	if err != nil {
		return nil, err
	}
	return append(argv, "git", "upload-pack"), nil
}

// Git runs git with args in a throwaway container on the clone at dir
// (at /work, its working directory, as the agent sees it) and returns
// what git printed; an error says what the runtime or git said.
func (b Box) Git(ctx context.Context, dir string, args ...string) (string, error) {
	argv, err := b.run(dir, containerWork, "-w", containerWork)
	if err != nil {
		return "", err
	}
	argv = append(append(argv, "git"), args...)
	ctx, cancel := context.WithTimeout(ctx, helperTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	proc.Group(cmd)
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s: %w", helperTimeout, ctx.Err())
		}
		if said := strings.Join(lines.Last(stderr.String(), 3), "; "); said != "" {
			err = fmt.Errorf("%w: %s", err, said)
		}
		return "", fmt.Errorf("git %s on %s, in a container of %s: %w", strings.Join(args, " "), dir, b, err)
	}
	return stdout.String(), nil
}

// helperTimeout bounds one run of git in a throwaway container: the
// image is here, so it is a start and one git command.
const helperTimeout = 2 * time.Minute

// run is the argv of a throwaway container of b's image, up to the
// image, with the clone at dir mounted read-only at target and opts.
// --pull=never: an image gone since the agent started is an error, not
// a download.
func (b Box) run(dir, target string, opts ...string) ([]string, error) {
	if err := checkMount("the agent's clone", dir, false); err != nil {
		return nil, err
	}
	if strings.HasPrefix(b.Image, "-") {
		return nil, fmt.Errorf("%w: sandbox %s: an image name cannot start with '-'", ErrUnavailable, b)
	}
	argv := []string{string(b.Runtime), "run", "--rm", "--network=none", "--pull=never"}
	argv = append(argv, opts...)
	return append(argv, "-v", dir+":"+target+":ro", b.Image), nil
}
