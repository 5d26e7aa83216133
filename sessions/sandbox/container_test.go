package sandbox

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

func TestContainerArgv(t *testing.T) {
	for _, tt := range []struct {
		runtime stages.SandboxKind
		session string
		want    []string
	}{
		{runtime: stages.SandboxDocker, session: "shop-developer-1", want: []string{
			"docker", "run", "--rm", "-i", "-t", "--name", "agenttree-shop-developer-1",
			"-v", "/wt/issue-1:/work", "-w", "/work",
			"-v", "/repo/.git:/agenttree/origin:ro",
			"-v", "/state/issues/001:/agenttree/docs",
			"-v", "/state/run:/agenttree/run",
			"-e", "AGENTTREE_SOCKET=/agenttree/run/controller.sock",
			"-v", "/state/host/agents/001.token:/agenttree/token:ro", "-e", "AGENTTREE_TOKEN_FILE=/agenttree/token",
			"-e", "AGENTTREE_ISSUE", "-e", "AGENTTREE_ROLE",
			"agent:latest", "sh", "-c", `claude --model "$MODEL"; echo 'done'`}},
		{runtime: stages.SandboxPodman, session: "my shop/dev ü+1", want: []string{
			"podman", "run", "--rm", "-i", "-t", "--name", "agenttree-my-shop-dev---1",
			"-v", "/wt/issue-1:/work", "-w", "/work",
			"-v", "/repo/.git:/agenttree/origin:ro",
			"-v", "/state/issues/001:/agenttree/docs",
			"-v", "/state/run:/agenttree/run",
			"-e", "AGENTTREE_SOCKET=/agenttree/run/controller.sock",
			"-v", "/state/host/agents/001.token:/agenttree/token:ro", "-e", "AGENTTREE_TOKEN_FILE=/agenttree/token",
			"-e", "AGENTTREE_ISSUE", "-e", "AGENTTREE_ROLE",
			"agent:latest", "sh", "-c", `claude --model "$MODEL"; echo 'done'`}},
	} {
		t.Run(string(tt.runtime), func(t *testing.T) {
			b := &box{runtime: tt.runtime, image: "agent:latest", name: containerName(tt.session),
				docs: "/state/issues/001", socket: "/state/run/controller.sock", token: "/state/host/agents/001.token", origin: "/repo/.git",
				command: `claude --model "$MODEL"; echo 'done'`}
			assert.Equal(t, tt.want, b.argv("/wt/issue-1"))
		})
	}
}

// fakeRuntime puts a program name on PATH, alone, that writes its
// arguments beside itself, then prints said to stderr and exits with
// status.
func fakeRuntime(t *testing.T, name, said string, status int) (argsFile string) {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"${0%/*}/args\"\n"
	if said != "" {
		script += "echo '" + said + "' >&2\n"
	}
	script += "exit " + strconv.Itoa(status) + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755))
	t.Setenv("PATH", dir)
	return filepath.Join(dir, "args")
}

func TestCheckImage(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sandbox stages.Sandbox
		fake    string // the runtime on PATH; empty: none
		said    string
		status  int
		msg     string // empty: the image is there
	}{
		{name: "docker has it", sandbox: stages.Sandbox{Kind: stages.SandboxDocker, Name: "agent:1"}, fake: "docker"},
		{name: "podman has it", sandbox: stages.Sandbox{Kind: stages.SandboxPodman, Name: "agent:1"}, fake: "podman"},
		{name: "docker has not", sandbox: stages.Sandbox{Kind: stages.SandboxDocker, Name: "agent:1"}, fake: "docker",
			said: "Error response from daemon: No such image: agent:1", status: 1,
			msg: "sandbox docker:agent:1: there is no image agent:1 here; pull it: docker pull agent:1"},
		{name: "podman has not", sandbox: stages.Sandbox{Kind: stages.SandboxPodman, Name: "agent:1"}, fake: "podman",
			said: "Error: agent:1: image not known", status: 2,
			msg: "sandbox podman:agent:1: there is no image agent:1 here; pull it: podman pull agent:1"},
		{name: "no daemon", sandbox: stages.Sandbox{Kind: stages.SandboxDocker, Name: "agent:1"}, fake: "docker",
			said: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?", status: 1,
			msg: "sandbox docker:agent:1: cannot tell whether image agent:1 is here: docker image inspect: Cannot connect to the Docker daemon"},
		{name: "no runtime", sandbox: stages.Sandbox{Kind: stages.SandboxPodman, Name: "agent:1"}, fake: "docker",
			msg: "install docker or podman, or set `sandbox: none`"},
		{name: "an option for an image", sandbox: stages.Sandbox{Kind: stages.SandboxDocker, Name: "--privileged"}, fake: "docker",
			msg: "an image name cannot start with '-'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := fakeRuntime(t, tt.fake, tt.said, tt.status)
			err := checkImage(t.Context(), tt.sandbox)
			if tt.msg == "" {
				require.NoError(t, err)
				assert.Equal(t, "image\ninspect\n--format\n{{.Id}}\nagent:1\n", readFile(t, args))
				return
			}
			require.ErrorIs(t, err, ErrUnavailable)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

// TestCheckImageWithTheRealDocker asks the docker installed here for an
// image no one has: it is not there, or there is no daemon to ask.
func TestCheckImageWithTheRealDocker(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("docker is not installed")
	}
	err := checkImage(t.Context(), stages.Sandbox{Kind: stages.SandboxDocker, Name: "agenttree-no-such-image"})
	require.ErrorIs(t, err, ErrUnavailable)
	if exec.Command("docker", "info").Run() == nil {
		assert.Contains(t, err.Error(), "pull it: docker pull agenttree-no-such-image")
	} else {
		assert.Contains(t, err.Error(), "cannot tell whether image agenttree-no-such-image is here: docker image inspect: ")
	}
}

func TestCheckMount(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "controller.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	colon := filepath.Join(dir, "a:b")
	require.NoError(t, os.Mkdir(colon, 0o755))

	for _, tt := range []struct {
		name   string
		path   string
		socket bool
		msg    string
	}{
		{name: "a directory", path: dir},
		{name: "the socket", path: sock, socket: true},
		{name: "no socket", path: filepath.Join(dir, "gone.sock"), socket: true, msg: "start the controller first (`agenttree controller`)"},
		{name: "a file for the socket", path: file, socket: true, msg: "is not the controller's socket"},
		{name: "no directory", path: filepath.Join(dir, "gone"), msg: "cannot mount the worktree in a container"},
		{name: "a colon", path: colon, msg: "its path holds a ':'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := checkMount("the worktree", tt.path, tt.socket)
			if tt.msg == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrUnavailable)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// Ending a session that ran in a container removes the container, which
// the killed client may have left running under the name the next start
// needs; a session on the host asks no runtime.
func TestEndRemovesTheContainer(t *testing.T) {
	args := fakeRuntime(t, "docker", "", 0)
	RemoveContainer(context.Background(), "docker:agent:latest", "shop-developer-1")
	assert.Equal(t, "rm\n-f\nagenttree-shop-developer-1\n", readFile(t, args))

	podman := fakeRuntime(t, "podman", "", 0)
	RemoveContainer(context.Background(), "none", "shop-developer-2")
	assert.NoFileExists(t, podman, "a host session asks no runtime")
}

func TestContainerOf(t *testing.T) {
	for _, tt := range []struct {
		sandbox string
		want    Box
		ok      bool
	}{
		{sandbox: "docker:agent:1", want: Box{Runtime: stages.SandboxDocker, Image: "agent:1"}, ok: true},
		{sandbox: "podman:registry.example/agent@sha256:ab", want: Box{Runtime: stages.SandboxPodman, Image: "registry.example/agent@sha256:ab"}, ok: true},
		{sandbox: "docker:"},
		{sandbox: "user:agent"},
		{sandbox: "none"},
		{sandbox: ""},
	} {
		t.Run(tt.sandbox, func(t *testing.T) {
			got, ok := ContainerOf(tt.sandbox)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// The host asks git about an agent's clone only in a throwaway container
// of the agent's image that gets the clone alone, read-only, and no
// network; an image gone meanwhile is not pulled.
func TestBoxRunsGitOnTheCloneAlone(t *testing.T) {
	clone := t.TempDir()
	b := Box{Runtime: stages.SandboxPodman, Image: "agent:1"}

	argv, err := b.UploadPack(clone)
	require.NoError(t, err)
	assert.Equal(t, []string{"podman", "run", "--rm", "--network=none", "--pull=never", "-i",
		"-v", clone + ":" + clone + ":ro", "agent:1", "git", "upload-pack"}, argv)

	args := fakeRuntime(t, "podman", "", 0)
	_, err = b.Git(t.Context(), clone, "status", "--porcelain")
	require.NoError(t, err)
	assert.Equal(t, strings.Join([]string{"run", "--rm", "--network=none", "--pull=never", "-w", "/work",
		"-v", clone + ":/work:ro", "agent:1", "git", "status", "--porcelain"}, "\n")+"\n", readFile(t, args))

	fakeRuntime(t, "podman", "Error: agent:1: image not known", 125)
	_, err = b.Git(t.Context(), clone, "status")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "git status on "+clone+", in a container of podman:agent:1: exit status 125: Error: agent:1: image not known")

	colon := filepath.Join(t.TempDir(), "a:b")
	require.NoError(t, os.Mkdir(colon, 0o755))
	_, err = b.UploadPack(colon)
	assert.ErrorContains(t, err, "its path holds a ':'")
	_, err = Box{Runtime: stages.SandboxDocker, Image: "--privileged"}.UploadPack(clone)
	assert.ErrorContains(t, err, "an image name cannot start with '-'")
}
