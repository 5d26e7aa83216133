package records

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/forge"
)

// Report is what Verify found of one record.
type Report struct {
	// Record names it for people ("local PR #3"); Path is its file.
	Record string `json:"record"`
	Path   string `json:"path"`
	OK     bool   `json:"ok"`
	// Versions counts the lines of its log that verify.
	Versions int `json:"versions"`
	// Problems say what is wrong: a line of the log, or the record
	// against the log.
	Problems []string `json:"problems,omitempty"`
	// Changes are how the record differs from the version its log holds
	// last, field by field.
	Changes []string `json:"changes,omitempty"`
	// Fix is what a person does about it, when it is not OK.
	Fix string `json:"fix,omitempty"`
	// Notes are worth knowing but not wrong: a write a crash interrupted.
	Notes []string `json:"notes,omitempty"`
}

// logExt ends the name of a record's log (chain.FileAt).
const logExt = ".chain.jsonl"

// Verify checks every record of the directory, in name order, against
// its whole log: every line (its hash, its link, that it is a version of
// this record following the one before) and the record against the last
// one. A log whose record is gone is a record removed. A directory that
// does not exist holds no records.
func (k Kind) Verify() ([]Report, error) {
	files, err := k.files()
	if err != nil {
		return nil, err
	}
	reports := make([]Report, 0, len(files))
	for _, file := range files {
		reports = append(reports, k.verify(file))
	}
	return reports, nil
}

// files names the records of the directory: each record file, and each
// log's record, there or not.
func (k Kind) files() ([]string, error) {
	var names []string
	for _, pattern := range []string{"*.yaml", "*" + logExt} {
		found, err := filepath.Glob(filepath.Join(k.Dir, pattern))
		if err != nil {
			return nil, err
		}
		for _, path := range found {
			base := filepath.Base(path)
			if strings.HasPrefix(base, ".") {
				continue // a log being created (chain.File.create)
			}
			if stem, ok := strings.CutSuffix(base, logExt); ok {
				base = stem + ".yaml"
			}
			names = append(names, base)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

func (k Kind) verify(file string) Report {
	f := k.File(file)
	rep := Report{Record: k.Name(file), Path: f.Path}
	lines, err := f.Log.Verify()
	var le *chain.Error
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		// A missing log is the record's problem: Read says so.
	case errors.Is(err, chain.ErrTorn):
		rep.Notes = append(rep.Notes, "its log ends in an incomplete line (an append a crash cut short), which the next write drops")
	case errors.As(err, &le):
		rep.Problems = append(rep.Problems, fmt.Sprintf("its log %s: %v", f.Log.Path, le))
	default:
		rep.Problems = append(rep.Problems, fmt.Sprintf("its log %s cannot be read: %v", f.Log.Path, err))
	}
	rep.Versions = len(lines)
	if why := versions(file, lines); why != "" {
		rep.Problems = append(rep.Problems, fmt.Sprintf("its log %s: %s", f.Log.Path, why))
	}
	_, err = k.Read(file)
	var te *forge.TamperedError
	switch {
	case errors.As(err, &te):
		rep.Problems = append(rep.Problems, te.Why)
		rep.Changes, rep.Fix = te.Changes, te.Fix
	case err != nil:
		rep.Problems = append(rep.Problems, "it cannot be read: "+err.Error())
	case !exists(f.Path):
		rep.Notes = append(rep.Notes, "its file is missing and its log holds it: a write a crash interrupted, which the next write finishes")
	}
	rep.OK = len(rep.Problems) == 0
	if !rep.OK && rep.Fix == "" {
		rep.Fix = fmt.Sprintf(k.Changed, f.Log.Path)
	}
	return rep
}

// versions says what is wrong with the lines of file's log as versions of
// it, "" when nothing is: each is a version of file, and each after the
// first replaces the one before it.
func versions(file string, lines []chain.Line) string {
	prev := ""
	for i, l := range lines {
		var v chain.Version
		switch err := l.Decode(&v); {
		case err != nil, v.SHA256 == "":
			return fmt.Sprintf("line %d is not a version of a record", l.N)
		case v.File != file:
			return fmt.Sprintf("line %d is a version of %s", l.N, v.File)
		case i > 0 && v.Replaces != prev:
			return fmt.Sprintf("line %d does not replace the version before it", l.N)
		}
		prev = v.SHA256
	}
	return ""
}
