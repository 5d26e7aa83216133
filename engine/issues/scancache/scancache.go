// Package scancache is the store's scan cache (host/issues/.scan-cache),
// apart from the store (package issues) because it is a cache, not the
// state: it holds what the last Scan read
// of each issue, with the stamps of its issue.yaml, events.jsonl and
// watch.yaml: inode, size, modification and change times. A later Scan
// stats the three files, and reuses what the cache holds when all three
// stamps are the same: a display of every issue then parses no YAML and
// reads no log.
//
// That is as strong a check as reading them again. The check of an
// issue (Get, eventlog.Log.CheckHead) depends on nothing but the content of issue.yaml
// and events.jsonl, and a file whose stamp is unchanged has its content
// unchanged: every write of a file, in place or by a rename, sets its
// change time to the clock's time, and no program can set a change time
// back (utimes sets the modification time and, in doing so, the change
// time to now). An entry is kept only when its files' change times are
// SettleTime older than the moment they were stat'ed: a change made
// afterwards, even within the file system's clock granularity, then gets
// a later change time, a different stamp. (The same rule as git's racily
// clean index entries.) An issue that fails its check is never kept.
//
// Only the host writes the cache, as it writes every file beside it; a
// process that cannot (an agent as another OS user) reads issues the
// slow way. Like the chain, the cache holds no secret: whoever can write
// the host's files can forge it, and could forge the chain as well.
// Nothing acts on what a cache says: Lock reads and checks the files
// every time, and so do `verify` and Get.
package scancache

import (
	"os"
	"path/filepath"
	"time"

	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/engine/issues/record"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/bincode"
	"github.com/agenttree/agenttree/internal/statedir"
)

// SettleTime is how long before a stat a file's change time must be for
// its entry to be kept: well above any file system's time granularity.
const SettleTime = 2 * time.Second

// scanCacheFormat changes whenever what scanFile holds means something
// else: a cache of another format is ignored. (A change to the types'
// fields needs no new format: the encoding's fingerprint of their shape
// no longer matches, and the cache is ignored as well.)
//
// The cache is encoded with bincode, not encoding/gob: gob's
// initialisation cost every command, status or not, a quarter of a
// millisecond, and bincode decodes 10,000 issues as fast.
const scanCacheFormat = 2

type scanFile struct {
	Format  int
	Entries []*Entry
}

// Entry is what a Scan read of one issue.
type Entry struct {
	ID     int
	Stamps Stamps
	Issue  *record.Issue
	// Watch is nil in the file when the issue has no watch.yaml
	// (Stamps.Watch is zero): most have none, and an empty one costs a
	// map to decode. Load gives an empty one.
	Watch *record.WatchFile
}

// Stamps are the stamps of an issue's files.
type Stamps struct {
	Issue, Events, Watch Stamp
}

// Stamp is a file's identity, size and times; the zero stamp is a file
// that does not exist.
type Stamp struct {
	Ino          uint64
	Size         int64
	Mtime, Ctime int64 // Unix nanoseconds
}

// Path is the scan cache of the issues directory dir.
func Path(dir string) string { return filepath.Join(dir, ".scan-cache") }

// Stamps stats issue id's files. Where the system has no change times,
// the stamps are unknown (the zero value).
func (st Stamper) Stamps(id int) Stamps {
	var f Stamps
	var ok bool
	// The directory's name as the layout names it, from a layout without
	// a root: a short path to clean, not the whole one.
	dir := filepath.Base(statedir.Layout{}.Issue(id)) + string(filepath.Separator)
	if f.Issue, ok = st.stamp(dir + "issue.yaml"); !ok {
		return Stamps{}
	}
	if f.Events, ok = st.stamp(dir + eventlog.File); !ok {
		return Stamps{}
	}
	if f.Watch, ok = st.stamp(dir + "watch.yaml"); !ok {
		return Stamps{}
	}
	return f
}

// Known reports whether the stamps can be compared: issue.yaml and
// events.jsonl exist and were stat'ed.
func (f Stamps) Known() bool { return f.Issue.Ino != 0 && f.Events.Ino != 0 }

// Settled reports whether every file was last changed settle before at,
// when they were stat'ed.
func (f Stamps) Settled(at time.Time, settle time.Duration) bool {
	limit := at.Add(-settle).UnixNano()
	for _, st := range []Stamp{f.Issue, f.Events, f.Watch} {
		if st.Ctime >= limit || st.Mtime >= limit {
			return false
		}
	}
	return f.Known()
}

// Cacheable reports whether iss comes back from the cache as it is: its
// vars hold only the scalars bincode carries in an interface (as YAML
// parses them). An issue with other vars is
// read every time.
func Cacheable(iss *record.Issue) bool {
	for _, v := range iss.Vars {
		switch v.(type) {
		case bool, int, float64, string:
		default:
			return false
		}
	}
	return true
}

// Load reads the scan cache at path, by issue id; a missing, unreadable
// or outdated cache is an empty one.
func Load(path string) map[int]*Entry {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	codec, err := bincode.New[scanFile]()
	if err != nil {
		return nil
	}
	var f scanFile
	if err := codec.Unmarshal(data, &f); err != nil || f.Format != scanCacheFormat {
		return nil
	}
	byID := make(map[int]*Entry, len(f.Entries))
	for _, e := range f.Entries {
		if e == nil || e.Issue == nil {
			continue
		}
		if e.Watch == nil {
			e.Watch = &record.WatchFile{}
		}
		if e.Watch.Hooks == nil {
			e.Watch.Hooks = map[string]string{} // as readWatch gives it
		}
		byID[e.ID] = e
	}
	return byID
}

// Save replaces the scan cache at path with entries (nil ones left
// out). It is a cache: a failure to write it (a process that may not
// write the host's files) is not one of the scan.
func Save(path string, entries []*Entry) {
	f := scanFile{Format: scanCacheFormat}
	for _, e := range entries {
		switch {
		case e == nil:
		case e.Stamps.Watch == Stamp{}:
			bare := *e
			bare.Watch = nil
			f.Entries = append(f.Entries, &bare)
		default:
			f.Entries = append(f.Entries, e)
		}
	}
	codec, err := bincode.New[scanFile]()
	if err != nil {
		return
	}
	data, err := codec.Marshal(&f)
	if err != nil {
		return
	}
	_ = atomicfile.Replace(path, data, 0o644)
}

// Changed reports whether entries, what the cache is to hold for ids,
// differ from cache, what it held.
func Changed(cache map[int]*Entry, ids []int, entries []*Entry) bool {
	kept := 0
	for i, e := range entries {
		switch {
		case e == nil:
		case e != cache[ids[i]]:
			return true
		default:
			kept++
		}
	}
	return kept != len(cache)
}

// Of stamps the file or directory at rel, a path inside the issues
// directory; ok is false when it cannot be (always where the system has
// no change times).
func (st Stamper) Of(rel string) (Stamp, bool) { return st.stamp(rel) }
