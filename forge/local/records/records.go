// Package records keeps the local forge's records, PR records (prs/) and
// CI results (checks/): YAML files, each logged in a hash chain beside it
// (chain), so that a record written, changed or removed outside
// agenttree is never taken for one agenttree wrote. Reading such a record
// is a *forge.TamperedError that names it, says what changed and what a
// person does; Verify checks every record of a directory, for `agenttree
// verify`.
package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/fielddiff"
)

// Kind is one directory of records: how people call them, and what a
// person does about one changed outside agenttree.
type Kind struct {
	chain.Records
	// Name is how people call the record in file (N.yaml, SHA.yaml):
	// "local PR #3".
	Name func(file string) string
	// Unlogged is what a person does about a record that has no log:
	// nothing holds what agenttree wrote. Changed is what a person does
	// about one its log does not hold (changed or removed); it is a
	// format with one verb, the log's path.
	Unlogged, Changed string
}

// Read returns record file's content, checked against its log. A record
// changed outside agenttree is a *forge.TamperedError; neither record
// nor log is an error wrapping fs.ErrNotExist.
func (k Kind) Read(file string) ([]byte, error) {
	data, err := k.Records.Read(file)
	if err != nil {
		return nil, k.tampered(file, err)
	}
	return data, nil
}

// tampered is err as a *forge.TamperedError when it says the record was
// changed outside agenttree; else err as it is.
func (k Kind) tampered(file string, err error) error {
	var changed *chain.ChangedError
	if !errors.As(err, &changed) {
		return err
	}
	te := &forge.TamperedError{Record: k.Name(file), Path: changed.Path, Why: changed.Err.Error(), Err: err,
		Changes: Changes(changed.Logged, changed.Found)}
	if errors.Is(err, chain.ErrUnlogged) {
		te.Fix = k.Unlogged
	} else {
		te.Fix = fmt.Sprintf(k.Changed, changed.Log)
	}
	return te
}

// Changes says, field by field, how the record found differs from the
// version its log holds (both YAML): nil when either is unknown or not
// a YAML mapping.
func Changes(logged, found []byte) []string {
	was, now := fields(logged), fields(found)
	if was == nil || now == nil {
		return nil
	}
	return fielddiff.Maps(was, now)
}

// fields is a YAML mapping's members as encoding/json decodes them (the
// values fielddiff shows), or nil.
func fields(data []byte) map[string]any {
	if data == nil {
		return nil
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil || raw == nil {
		return nil
	}
	js, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil
	}
	return m
}

// Write logs data as record file's new version, then replaces the record
// (chain.Records.Write). The caller holds the record's lock.
func (k Kind) Write(file string, data []byte) error { return k.Records.Write(file, data) }

// Path is record file's path.
func (k Kind) Path(file string) string { return k.File(file).Path }

// exists reports whether path is there.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
