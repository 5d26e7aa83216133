package board

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agenttree/agenttree/internal/gitx"
)

// diffStat is a PR's diff stat as the page shows it, with the
// refs it was counted between.
type diffStat struct {
	gitx.DiffStat
	Base, Head string
}

// Text is the stat as git words it, shortened: "3 files changed, +10 −2".
func (d diffStat) Text() string {
	files := "files"
	if d.Files == 1 {
		files = "file"
	}
	return fmt.Sprintf("%d %s changed, +%d −%d", d.Files, files, d.Insertions, d.Deletions)
}

// How the board bounds the git it runs for diff stats: each command's
// time, how long the refs it resolved are taken as current, how many
// stats it keeps, and how many git commands run at once.
const (
	diffTimeout  = 5 * time.Second
	refsFresh    = 2 * time.Second
	diffsKept    = 256
	gitsAtOnce   = 2
	originPrefix = "refs/remotes/" + gitx.DefaultRemote + "/"
)

// diffStats counts PRs' diff stats with git in the repository, never
// asking a forge (docs/ARCHITECTURE.md §11): the refs are resolved at
// most every refsFresh, and a stat is counted once per pair of commits.
type diffStats struct {
	sem chan struct{}

	mu    sync.Mutex
	refs  map[string]resolved
	stats map[string]gitx.DiffStat
}

// resolved is a base and head resolved to commits ("" when missing).
type resolved struct {
	at                           time.Time
	base, head, baseSHA, headSHA string
}

func newDiffStats() *diffStats {
	return &diffStats{sem: make(chan struct{}, gitsAtOnce), refs: map[string]resolved{}, stats: map[string]gitx.DiffStat{}}
}

// of is branch's diff stat against def in the repository at dir: the
// branch and base as origin has them, else as the repository's own
// branches. ok is false when either is missing or git failed.
func (d *diffStats) of(ctx context.Context, dir, branch, def string) (diffStat, bool) {
	if dir == "" || branch == "" || def == "" || strings.HasPrefix(branch, "-") || strings.HasPrefix(def, "-") {
		return diffStat{}, false
	}
	repo := &gitx.Repo{Dir: dir, Timeout: diffTimeout}
	key := dir + "\x00" + branch + "\x00" + def
	d.mu.Lock()
	r, ok := d.refs[key]
	d.mu.Unlock()
	if !ok || time.Since(r.at) > refsFresh {
		var err error
		if r, err = d.resolve(ctx, repo, branch, def); err != nil {
			return diffStat{}, false
		}
		d.mu.Lock()
		keep(d.refs, key, r)
		d.mu.Unlock()
	}
	if r.baseSHA == "" || r.headSHA == "" {
		return diffStat{}, false
	}
	out := diffStat{Base: shortRef(r.base), Head: shortRef(r.head)}
	pair := dir + "\x00" + r.baseSHA + "\x00" + r.headSHA
	d.mu.Lock()
	s, ok := d.stats[pair]
	d.mu.Unlock()
	if ok {
		out.DiffStat = s
		return out, true
	}
	if !d.acquire(ctx) {
		return diffStat{}, false
	}
	s, err := repo.DiffStat(ctx, r.baseSHA, r.headSHA)
	<-d.sem
	if err != nil {
		return diffStat{}, false
	}
	d.mu.Lock()
	keep(d.stats, pair, s)
	d.mu.Unlock()
	out.DiffStat = s
	return out, true
}

// resolve finds the base and head refs and their commits in one git
// command; a ref that is not there is left "".
func (d *diffStats) resolve(ctx context.Context, repo *gitx.Repo, branch, def string) (resolved, error) {
	if !d.acquire(ctx) {
		return resolved{}, ctx.Err()
	}
	defer func() { <-d.sem }()
	heads := []string{originPrefix + branch, "refs/heads/" + branch}
	bases := []string{originPrefix + def, "refs/heads/" + def}
	out, err := repo.Run(ctx, append([]string{"for-each-ref", "--format=%(objectname) %(refname)"}, append(heads, bases...)...)...)
	if err != nil {
		return resolved{}, err
	}
	// for-each-ref matches a pattern's sub-refs too: keep exact names.
	sha := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if obj, ref, ok := strings.Cut(line, " "); ok {
			sha[ref] = obj
		}
	}
	r := resolved{at: time.Now()}
	for _, ref := range heads {
		if sha[ref] != "" {
			r.head, r.headSHA = ref, sha[ref]
			break
		}
	}
	for _, ref := range bases {
		if sha[ref] != "" {
			r.base, r.baseSHA = ref, sha[ref]
			break
		}
	}
	return r, nil
}

// acquire waits for a turn to run git, or for ctx.
func (d *diffStats) acquire(ctx context.Context) bool {
	select {
	case d.sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// keep stores v under k in m, forgetting everything first when m is full:
// a board's PRs are few, so this is rare and costs one recount each.
func keep[V any](m map[string]V, k string, v V) {
	if len(m) >= diffsKept {
		clear(m)
	}
	m[k] = v
}

// shortRef is ref as people write it: origin/main, main.
func shortRef(ref string) string {
	return cmp.Or(strings.TrimPrefix(strings.TrimPrefix(ref, "refs/remotes/"), "refs/heads/"), ref)
}
