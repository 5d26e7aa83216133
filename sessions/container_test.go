package sessions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/internal/sessionstest"
	"github.com/agenttree/agenttree/sessions/tokens"
)

// standInRuntime is docker as this machine has none: `image inspect`
// finds every image, `rm` removes nothing, and `run` writes its
// arguments beside itself (run.args for the agent's run, the one with a
// terminal; a line of runs for every run) and the AGENTTREE_ variables
// of its own environment (run.env), then runs the command in a container
// of its own making: a private mount namespace (unshare; root only)
// whose root, a tmpfs, holds the host's system directories and the
// image's, read-only, and what -v mounts, nothing else. The host's
// repository, the state and the test's directories are not there. It
// passes the environment -e names and a PATH and HOME, works in -w, and
// with --network=none has no network.
const standInRuntime = `#!/bin/sh
here=${0%/*}
image_dirs=@IMAGE@
case $1 in
image|rm) exit 0 ;;
run) ;;
*) echo "stand-in runtime: no command $1" >&2; exit 125 ;;
esac
echo "$*" >> "$here/runs"
case " $* " in
*" -t "*)
	printf '%s\n' "$@" > "$here/run.args"
	{ echo "AGENTTREE_ISSUE=$AGENTTREE_ISSUE"; echo "AGENTTREE_ROLE=$AGENTTREE_ROLE"; echo "AGENTTREE_TOKEN=$AGENTTREE_TOKEN"; echo "AGENTTREE_TOKEN_FILE=$AGENTTREE_TOKEN_FILE"; } > "$here/run.tmp"
	mv "$here/run.tmp" "$here/run.env" ;;
esac
shift
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null || ! command -v chroot >/dev/null; then
	echo "stand-in runtime: a container needs root, unshare and chroot" >&2
	exit 125
fi
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
envs="'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' 'HOME=/root'"
mounts=
wd=/
net=
while [ $# -gt 0 ]; do
	case $1 in
	--rm|-i|-t|--pull=never) ;;
	--network=none) net=--net ;;
	--name) shift ;;
	-w) shift; wd=$1 ;;
	-e) shift
		case $1 in
		*=*) envs="$envs $(q "$1")" ;;
		*) if v=$(printenv "$1"); then envs="$envs $(q "$1=$v")"; fi ;;
		esac ;;
	-v) shift
		src=${1%%:*}; rest=${1#*:}; dst=${rest%%:*}; mode=
		[ "$rest" != "$dst" ] && mode=${rest#*:}
		mounts="$mounts
bind $(q "$src") $(q "$dst") $(q "$mode")" ;;
	-*) echo "stand-in runtime: unknown option $1" >&2; exit 125 ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 1 ] || { echo "stand-in runtime: no image, or no command" >&2; exit 125; }
shift
cmd=
for a; do cmd="$cmd $(q "$a")"; done
root=$(mktemp -d "$here/root.XXXXXX") || exit 125
{
	echo 'set -e'
	echo "R=$(q "$root")"
	cat <<'SETUP'
ro() { mount -o remount,bind,ro "$1"; }
sys() {
	if [ -L "$1" ]; then ln -s "$(readlink "$1")" "$R$1"
	elif [ -d "$1" ]; then mkdir -p "$R$1"; mount --rbind "$1" "$R$1"; ro "$R$1"; fi
}
bind() {
	if [ -d "$1" ]; then mkdir -p "$R$2"; else mkdir -p "$R${2%/*}"; : > "$R$2"; fi
	mount --bind "$1" "$R$2"
	if [ "$3" = ro ]; then ro "$R$2"; fi
}
mount -t tmpfs stand-in "$R"
for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc; do sys "$d"; done
mkdir -p "$R/dev" "$R/proc" "$R/tmp" "$R/root"
chmod 1777 "$R/tmp"
mount --rbind /dev "$R/dev"
mount -t proc proc "$R/proc"
SETUP
	for d in $image_dirs; do echo "bind $(q "$d") $(q "$d") ro"; done
	echo "$mounts"
	echo "exec chroot \"\$R\" /usr/bin/env -i $envs /bin/sh -c 'cd \"\$1\" && shift && exec \"\$@\"' container $(q "$wd")$cmd"
} > "$root.sh"
unshare --mount --propagation private $net sh "$root.sh"
rc=$?
rmdir "$root"
rm -f "$root.sh"
exit $rc
`

// standIn writes standInRuntime as docker in a directory of its own,
// with image the directories of the image's own files, and returns the
// directory.
func standIn(t *testing.T, image ...string) string {
	t.Helper()
	bin := t.TempDir()
	script := strings.Replace(standInRuntime, "@IMAGE@", "'"+strings.Join(image, " ")+"'", 1)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "docker"), []byte(script), 0o755))
	return bin
}

// listenController opens the controller's socket of r's state, as a
// running controller does; the state is made with the first issue.
func listenController(r *sessionstest.Rig) {
	l, err := api.Listen(r.E.Store.Layout().Socket())
	require.NoError(r.T, err)
	r.T.Cleanup(func() { _ = l.Close() })
}

func TestStartRunsTheAgentInAContainer(t *testing.T) {
	r := sessionstest.NewRig(t, "sandbox: docker:agent:1")
	bin := standIn(t, r.Bin)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	iss := r.Create("Boxed", "work")
	listenController(r)

	res, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
	require.NoError(t, err)
	assert.Equal(t, "docker:agent:1", res.Session.Sandbox)
	assert.True(t, res.Session.Clone, "the agent works in a clone of its own, not a linked worktree")

	env := filepath.Join(bin, "run.env")
	require.Eventually(t, func() bool { _, err := os.Stat(env); return err == nil }, 10*time.Second, 20*time.Millisecond)
	layout := r.E.Store.Layout()
	args := readAll(t, filepath.Join(bin, "run.args"))
	assert.Equal(t, strings.Join([]string{"run", "--rm", "-i", "-t", "--name", "agenttree-shop-developer-1",
		"-v", res.Session.Worktree + ":/work", "-w", "/work",
		"-v", filepath.Join(r.Repo, ".git") + ":/agenttree/origin:ro",
		"-v", layout.Docs(iss.ID) + ":/agenttree/docs",
		"-v", filepath.Dir(layout.Socket()) + ":/agenttree/run",
		"-e", "AGENTTREE_SOCKET=/agenttree/run/controller.sock",
		"-v", layout.AgentToken(iss.ID) + ":/agenttree/token:ro", "-e", "AGENTTREE_TOKEN_FILE=/agenttree/token",
		"-e", "AGENTTREE_ISSUE", "-e", "AGENTTREE_ROLE",
		"agent:1", "sh", "-c", filepath.Join(r.Bin, "agent.sh")}, "\n")+"\n", args)

	// The values the container takes by name are in the pane's
	// environment, not in its arguments; the token is in neither: the
	// container reads it from the file mounted into it alone.
	got := readAll(t, env)
	assert.Contains(t, got, "AGENTTREE_ISSUE=1\nAGENTTREE_ROLE=developer\nAGENTTREE_TOKEN=\nAGENTTREE_TOKEN_FILE=\n")
	token := strings.TrimSpace(readAll(t, layout.AgentToken(iss.ID)))
	sess, err := tokens.Open(r.E.Store.Root()).Lookup(token)
	require.NoError(t, err)
	assert.Equal(t, iss.ID, sess.Issue)
	assert.NotContains(t, args, token)
}

func TestStartInAContainerThatCannotRunLeavesNothing(t *testing.T) {
	tools := t.TempDir()
	for _, tool := range []string{"tmux", "git"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Skip(tool + " is not installed")
		}
		require.NoError(t, os.Symlink(path, filepath.Join(tools, tool)))
	}
	withDocker := standIn(t)

	for _, tt := range []struct {
		name    string
		sandbox string
		path    string // PATH; empty: the host's
		msg     string
	}{
		{name: "no runtime", sandbox: "podman:agent:1", path: tools,
			msg: "sandbox podman:agent:1: podman is not installed"},
		{name: "no controller", sandbox: "docker:agent:1", path: withDocker + string(os.PathListSeparator) + os.Getenv("PATH"),
			msg: "start the controller first (`agenttree controller`)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := sessionstest.NewRig(t, "sandbox: "+tt.sandbox)
			iss := r.Create("Boxed", "work")
			t.Setenv("PATH", tt.path)
			_, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
			require.ErrorIs(t, err, sessions.ErrSandbox)
			assert.Contains(t, err.Error(), tt.msg)
			assertNothingMade(r, iss.Branch)
		})
	}
}

// TestStartInAMissingImageLeavesNothing asks the docker installed here
// for an image no one has: a daemon says it is not there, and without
// one docker cannot tell.
func TestStartInAMissingImageLeavesNothing(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("docker is not installed")
	}
	r := sessionstest.NewRig(t, "sandbox: docker:nosuch")
	iss := r.Create("Boxed", "work")
	listenController(r)
	_, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
	require.ErrorIs(t, err, sessions.ErrSandbox)
	if exec.Command("docker", "info").Run() == nil {
		assert.Contains(t, err.Error(), "sandbox docker:nosuch: there is no image nosuch here; pull it: docker pull nosuch")
	} else {
		assert.Contains(t, err.Error(), "sandbox docker:nosuch: cannot tell whether image nosuch is here")
	}
	assertNothingMade(r, iss.Branch)
}
