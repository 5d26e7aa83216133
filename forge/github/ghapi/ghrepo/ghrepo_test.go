package ghrepo

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github/githubtest/clienttest"
	"github.com/agenttree/agenttree/internal/gittest"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(clienttest.RunIsolated(m))
}

func TestParseRemoteURL(t *testing.T) {
	tests := []struct {
		url     string
		want    Repo
		wantErr string
	}{
		{url: "https://github.com/octo/app.git", want: Repo{"github.com", "octo", "app"}},
		{url: "https://github.com/octo/app", want: Repo{"github.com", "octo", "app"}},
		{url: "https://github.com/octo/app/", want: Repo{"github.com", "octo", "app"}},
		{url: "https://x-access-token:secret@github.com/octo/app.git", want: Repo{"github.com", "octo", "app"}},
		{url: "http://GitHub.com/Octo/App.git", want: Repo{"github.com", "Octo", "App"}},
		{url: "git@github.com:octo/app.git", want: Repo{"github.com", "octo", "app"}},
		{url: "github.com:octo/app", want: Repo{"github.com", "octo", "app"}},
		{url: "ssh://git@github.com/octo/app.git", want: Repo{"github.com", "octo", "app"}},
		{url: "ssh://git@ssh.github.com:443/octo/app.git", want: Repo{"github.com", "octo", "app"}},
		{url: "git+ssh://git@github.com/octo/app.git", want: Repo{"github.com", "octo", "app"}},
		{url: "git://github.com/octo/app.git", want: Repo{"github.com", "octo", "app"}},
		{url: "https://ghe.example.com/team/svc.git", want: Repo{"ghe.example.com", "team", "svc"}},
		{url: "git@ghe.example.com:team/svc.git", want: Repo{"ghe.example.com", "team", "svc"}},
		{url: "ssh://git@ghe.example.com:2222/team/svc", want: Repo{"ghe.example.com", "team", "svc"}},
		{url: "https://acme.ghe.com/team/svc", want: Repo{"acme.ghe.com", "team", "svc"}},
		{url: "git@gitlab.com:group/proj.git", want: Repo{"gitlab.com", "group", "proj"}},
		{url: "/srv/git/app.git", wantErr: `remote "/srv/git/app.git" is a local path`},
		{url: "/tmp/x/origin.git\n", wantErr: `remote "/tmp/x/origin.git" is a local path`},
		{url: "  https://github.com/octo/app/extra\n", wantErr: `remote URL "https://github.com/octo/app/extra" does not`},
		{url: "../app.git", wantErr: "local path"},
		{url: "file:///srv/git/app.git", wantErr: "local path"},
		{url: "https://gitlab.com/group/sub/proj.git", wantErr: "does not name host/owner/repo"},
		{url: "ftp://github.com/octo/app", wantErr: "unsupported scheme"},
		{url: "", wantErr: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got, err := ParseRemoteURL(tt.url)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.NotContains(t, err.Error(), `\n`, "git's trailing newline is not quoted")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseRepo(t *testing.T) {
	r, err := ParseRepo("octo/app", "github.com")
	require.NoError(t, err)
	assert.Equal(t, Repo{"github.com", "octo", "app"}, r)
	r, err = ParseRepo("ghe.example.com/octo/app", "github.com")
	require.NoError(t, err)
	assert.Equal(t, Repo{"ghe.example.com", "octo", "app"}, r)
	r, err = ParseRepo("git@github.com:octo/app.git", "ignored")
	require.NoError(t, err)
	assert.Equal(t, Repo{"github.com", "octo", "app"}, r)
	_, err = ParseRepo("app", "github.com")
	assert.Error(t, err)
}

// gitRepo makes a real repository with the given origin ("" for none).
func gitRepo(t *testing.T, origin string) string {
	t.Helper()
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q")
	if origin != "" {
		gittest.Run(t, dir, "remote", "add", "origin", origin)
	}
	return dir
}

func TestResolveReadsTheOriginRemote(t *testing.T) {
	tests := []struct {
		name     string
		origin   string // "" = no origin remote
		noGit    bool
		env      map[string]string
		host     string
		want     Repo
		wantErr  error
		wantText []string
	}{
		{name: "https", origin: "https://github.com/octo/app.git", want: Repo{"github.com", "octo", "app"}},
		{name: "ssh", origin: "git@github.com:octo/app.git", want: Repo{"github.com", "octo", "app"}},
		{name: "ssh URL", origin: "ssh://git@github.com/octo/app", want: Repo{"github.com", "octo", "app"}},
		{name: "GHE host known by token", origin: "https://ghe.example.com/team/svc.git",
			env: map[string]string{"GH_ENTERPRISE_TOKEN": "t"}, want: Repo{"ghe.example.com", "team", "svc"}},
		{name: "GHE host via GH_HOST", origin: "git@ghe.example.com:team/svc.git",
			env: map[string]string{"GH_HOST": "ghe.example.com"}, want: Repo{"ghe.example.com", "team", "svc"}},
		{name: "ssh alias with explicit host", origin: "git@github-work:octo/app.git", host: "github.com",
			want: Repo{"github.com", "octo", "app"}},
		{name: "unknown host", origin: "https://git.example.com/team/svc.git", wantErr: ErrNotGitHub,
			wantText: []string{"origin is git.example.com/team/svc", "gh auth login --hostname git.example.com", "forge: local"}},
		{name: "GitLab", origin: "git@gitlab.com:group/proj.git", env: map[string]string{"GH_ENTERPRISE_TOKEN": "t"},
			wantErr: ErrNotGitHub, wantText: []string{"origin is gitlab.com/group/proj", "needs a GitHub remote", "forge: local"}},
		{name: "local path", origin: "/tmp/x/origin.git", wantErr: ErrNotGitHub,
			wantText: []string{`remote "/tmp/x/origin.git" is a local path`, "forge: local"}},
		{name: "no origin", wantErr: ErrNoRemote, wantText: []string{`no "origin" remote`, "git remote add origin", "`github: {repo: owner/name}`"}},
		{name: "not a git repository", noGit: true, wantErr: ErrNoRemote, wantText: []string{"not a git repository", "`github: {repo: owner/name}`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			dir := t.TempDir()
			if !tt.noGit {
				dir = gitRepo(t, tt.origin)
			}
			repo, err := Resolve(context.Background(), Lookup{Dir: dir, Host: tt.host})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				for _, s := range tt.wantText {
					assert.Contains(t, err.Error(), s)
				}
				assert.NotContains(t, err.Error(), `\n`)
				assert.NotContains(t, err.Error(), "github_repo", "a key the config loader rejects")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, repo)
		})
	}
}
