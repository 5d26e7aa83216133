package trustcmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/internal/identity"
	"github.com/agenttree/agenttree/internal/statedir"
)

// useradd is how `doctor --fix` makes the agents' user: a system account
// (no password, so nobody logs in as it) with a group of its own, which
// the stage documents take, and a home for the agent's own tools' files.
func useradd(name string) []string {
	return []string{"useradd", "--system", "--user-group", "--create-home", "--shell", "/bin/sh", name}
}

// agentUser is the agents' OS user, with every group it is in.
type agentUser struct {
	name          string
	uid, gid      int
	groups        []int
	primaryOfHost int // the host's primary group, -1 unknown
}

func lookupAgent(name string, host int) (*agentUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	a := &agentUser{name: name, primaryOfHost: -1}
	a.uid, _ = strconv.Atoi(u.Uid)
	a.gid, _ = strconv.Atoi(u.Gid)
	a.groups = []int{a.gid}
	ids, _ := u.GroupIds()
	for _, id := range ids {
		if g, err := strconv.Atoi(id); err == nil && !slices.Contains(a.groups, g) {
			a.groups = append(a.groups, g)
		}
	}
	if h, err := user.LookupId(strconv.Itoa(host)); err == nil {
		a.primaryOfHost, _ = strconv.Atoi(h.Gid)
	}
	return a, nil
}

// hostsGroup is the group among the agent's that is root's or the host's
// own (-1: none): being in it lets the agent write what they let their
// group write, anywhere.
func (a *agentUser) hostsGroup() int {
	for _, g := range a.groups {
		if g == 0 || (g == a.primaryOfHost && g != a.gid) {
			return g
		}
	}
	return -1
}

// agentUserFinding checks the agents' OS user of `sandbox: user:NAME`: it
// exists, is not a person, is in no group of root's or the host's, and
// the stage documents take a group it is in (issues/ is set-group-id in
// that group, and every issue's documents are in it).
func agentUserFinding(name string, l statedir.Layout, host int) finding {
	f := finding{Check: "agents' OS user " + name}
	a, err := lookupAgent(name, host)
	if err != nil {
		f.Detail = fmt.Sprintf("agents cannot run as %s: %v", name, err)
		f.Fix = "`agenttree doctor --fix`, as root, makes it: " + strings.Join(useradd(name), " ")
		return f
	}
	if a.uid == host || a.uid == 0 {
		f.Detail, f.Fix = name+" is root or owns the state directory: it is a person to agenttree", "run agents as a user of their own, not "+name
		return f
	}
	if g := a.hostsGroup(); g >= 0 {
		f.Detail = fmt.Sprintf("%s is in %s, root's or the state directory's owner's group: it may write whatever that group may", name, statedir.GroupName(g))
		f.Fix = fmt.Sprintf("take it out of that group (gpasswd -d %s GROUP); the stage documents take a group of its own (`agenttree doctor --fix`)", name)
		return f
	}
	docs := filepath.Join(l.Root, "issues")
	fixDocs := fmt.Sprintf("`agenttree doctor --fix` gives %s and the issues' document directories %s's own group %s "+
		"(chgrp, chmod g+s); never add %s to a group of yours or root's", docs, name, statedir.GroupName(a.gid), name)
	fi, err := os.Stat(docs)
	if err != nil {
		f.Detail = fmt.Sprintf("%s is not made yet: the first issue would make it in the group of whoever creates it, which %s is not in, so it could not write its stage documents", docs, name)
		f.Fix = fixDocs
		return f
	}
	_, gid, _ := identity.FileOwner(fi)
	switch {
	case !slices.Contains(a.groups, gid):
		f.Detail = fmt.Sprintf("%s is not in %s, the group of %s, which every issue's documents take: it cannot write its stage documents", name, statedir.GroupName(gid), docs)
		f.Fix = fixDocs
		return f
	case fi.Mode()&fs.ModeSetgid == 0:
		f.Detail = fmt.Sprintf("%s is not set-group-id: new issues' documents would take the group of whoever makes them, which %s is not in", docs, name)
		f.Fix = fixDocs
		return f
	}
	if cannot := unwritableDocs(docs, a); len(cannot) > 0 {
		f.Detail = fmt.Sprintf("%s cannot write the documents of %d issues, first %s", name, len(cannot), cannot[0])
		f.Fix = fixDocs
		return f
	}
	f.OK, f.Detail = true, fmt.Sprintf("uid %d; the stage documents take its group %s (%s is set-group-id)", a.uid, statedir.GroupName(gid), docs)
	return f
}

// unwritableDocs are the issues' document directories a cannot write.
func unwritableDocs(docs string, a *agentUser) []string {
	entries, _ := os.ReadDir(docs)
	var out []string
	for _, e := range entries {
		path := filepath.Join(docs, e.Name())
		fi, err := os.Lstat(path)
		if _, err2 := strconv.Atoi(e.Name()); err != nil || err2 != nil || !fi.IsDir() {
			continue
		}
		if _, gid, _ := identity.FileOwner(fi); !slices.Contains(a.groups, gid) || fi.Mode().Perm()&0o020 == 0 {
			out = append(out, path)
		}
	}
	return out
}

// fixer makes the setup doctor describes, saying what it changed and
// what it could not.
type fixer struct {
	host    int
	root    bool // this process is root's
	changed []string
	failed  []string
}

func (f *fixer) did(format string, args ...any) {
	f.changed = append(f.changed, fmt.Sprintf(format, args...))
}
func (f *fixer) fail(what string, err error) {
	f.failed = append(f.failed, fmt.Sprintf("could not %s: %v", what, err))
}

// fix makes the setup: the state directory and issues/ where missing
// (the host's), the agents' user of `sandbox: user:NAME` (as root) and
// the documents' group, and no group or world write bit on the
// directories above the state directory that are the host's, the state
// directory, issues/, run/, host/ and what it holds, and .git. Above the
// state directory it changes only what the host owns (root's /srv is not
// its to change; it says so); it never changes the documents'
// directories, which agents write, nor what another user owns in host/
// (the agents' token files).
func fix(l statedir.Layout, host int, sandboxUser string) *fixer {
	f := &fixer{host: host, root: os.Geteuid() == 0}
	docs := filepath.Join(l.Root, "issues")
	f.mkdir(l.Root, 0o755, -1)
	var agent *agentUser
	if sandboxUser != "" {
		agent = f.agentUser(sandboxUser)
	}
	gid := -1
	if agent != nil && agent.hostsGroup() < 0 && agent.gid != 0 {
		gid = agent.gid
	}
	docsMode := fs.FileMode(0o755)
	if gid >= 0 {
		docsMode |= fs.ModeSetgid
	}
	f.mkdir(docs, docsMode, gid)
	if gid >= 0 {
		f.docsGroup(docs, gid)
	}
	for _, dir := range statedir.Ancestors(realDir(l.Root)) {
		fi, err := os.Stat(dir)
		if err != nil || statedir.ExposedAncestor(fi, host) == "" {
			continue
		}
		if uid, _, _ := identity.FileOwner(fi); uid != host {
			// Not the host's: what else it holds is its owner's business.
			f.failed = append(f.failed, fmt.Sprintf("left alone %s: it is owned by %s, not by the state directory's owner; ask its owner, or move the repository", dir, ownerName(fi)))
			continue
		}
		f.noWrite(dir, fi)
	}
	for _, dir := range []string{l.Root, docs, filepath.Dir(l.Socket())} {
		if fi, err := os.Lstat(dir); err == nil {
			f.noWrite(dir, fi)
		}
	}
	f.tree(l.Host(), nil)
	if dir := gitDir(filepath.Dir(l.Root)); dir != "" {
		f.tree(dir, func(rel string) bool {
			top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
			return slices.Contains(gitTrees, top) || slices.Contains(gitFiles, rel)
		})
	}
	return f
}

// mkdir makes dir with mode if it is missing: the host's, in group gid
// (-1: as it comes).
func (f *fixer) mkdir(dir string, mode fs.FileMode, gid int) {
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		f.fail("make "+dir, err)
		return
	}
	uid := -1
	if f.root {
		uid = f.host
	}
	if uid >= 0 || gid >= 0 {
		if err := os.Lchown(dir, uid, gid); err != nil {
			f.fail("give "+dir+" its owner and group", err)
		}
	}
	if err := os.Chmod(dir, mode); err != nil {
		f.fail("chmod "+dir, err)
	}
	f.did("made %s (%s)", dir, statedir.ModeString(mode|fs.ModeDir))
}

// agentUser finds the agents' user, making it (as root) if it is missing.
func (f *fixer) agentUser(name string) *agentUser {
	if a, err := lookupAgent(name, f.host); err == nil {
		return a
	}
	argv := useradd(name)
	if !f.root {
		f.failed = append(f.failed, fmt.Sprintf("could not make the agents' user %s: only root may (%s)", name, strings.Join(argv, " ")))
		return nil
	}
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		f.fail(strings.Join(argv, " "), fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out))))
		return nil
	}
	f.did("made the agents' user %s (%s)", name, strings.Join(argv, " "))
	a, err := lookupAgent(name, f.host)
	if err != nil {
		f.fail("find the user just made", err)
		return nil
	}
	return a
}

// docsGroup gives issues/ and every issue's documents directory group
// gid, issues/ set-group-id (new issues' documents take its group) and
// the documents' directories statedir.DocsMode.
func (f *fixer) docsGroup(docs string, gid int) {
	dirs := []string{docs}
	entries, _ := os.ReadDir(docs)
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() {
			dirs = append(dirs, filepath.Join(docs, e.Name()))
		}
	}
	for _, dir := range dirs {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		if _, g, ok := identity.FileOwner(fi); ok && g != gid {
			if err := os.Lchown(dir, -1, gid); err != nil {
				f.fail(fmt.Sprintf("chgrp %d %s", gid, dir), err)
				continue
			}
			f.did("chgrp %s %s (was %s)", statedir.GroupName(gid), dir, statedir.GroupName(g))
		}
		want := fi.Mode()&fs.ModePerm&^0o022 | fs.ModeSetgid
		if dir != docs {
			want = statedir.DocsMode
		}
		if fi.Mode()&(fs.ModePerm|fs.ModeSetgid|fs.ModeSetuid|fs.ModeSticky) != want {
			if err := os.Chmod(dir, want); err != nil {
				f.fail("chmod "+dir, err)
				continue
			}
			f.did("chmod %s %s (was %s)", statedir.ModeString(want|fs.ModeDir), dir, statedir.ModeString(fi.Mode()))
		}
	}
}

// tree takes the group and world write bits off root and what it holds
// (only, if not nil, says which paths under it), where the host or root
// owns it. Symbolic links and what other users own are left alone.
func (f *fixer) tree(root string, only func(rel string) bool) {
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if only != nil && path != root && !only(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if fi, err := d.Info(); err == nil {
			f.noWrite(path, fi)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		f.fail("look through "+root, err)
	}
}

// noWrite takes the group and world write bits off path, if the host or
// root owns it.
func (f *fixer) noWrite(path string, fi fs.FileInfo) {
	uid, _, ok := identity.FileOwner(fi)
	if !ok || fi.Mode()&fs.ModeSymlink != 0 || fi.Mode().Perm()&0o022 == 0 || (uid != f.host && uid != 0) {
		return
	}
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSetuid | fs.ModeSticky)
	if err := os.Chmod(path, mode&^0o022); err != nil {
		f.fail("chmod g-w,o-w "+path, err)
		return
	}
	f.did("chmod g-w,o-w %s (was %s)", path, statedir.ModeString(fi.Mode()))
}
