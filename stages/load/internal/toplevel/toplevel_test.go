package toplevel

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/settings"
)

// paths lists the dotted path of every key of ks, with `*` for the entry
// of a mapping of names.
func paths(ks []settings.Key, path string, out map[string]bool) {
	for _, k := range ks {
		p := join(path, k.Name)
		out[p] = true
		if k.Type == settings.TypeNames {
			p += ".*"
		}
		paths(k.Keys, p, out)
	}
}

// Each reader of its own names a declared key: one whose path were
// misspelt would leave the key to its type's reader, and its check
// undone.
func TestOwnReadersReadDeclaredKeys(t *testing.T) {
	declared := map[string]bool{}
	paths(settings.TopLevel(), "", declared)
	r := &reader{d: &diag.Collector{}}
	for path := range r.ownReaders() {
		_, ok := declared[path]
		assert.True(t, ok, "%s is read by a reader of its own but not declared", path)
	}
}

// Every key the declaration binds to a field is read by a reader of its
// own or by its type's: a type without a reader would panic on the first
// file that sets the key.
func TestEveryBoundKeyHasAReader(t *testing.T) {
	r := &reader{d: &diag.Collector{}}
	own := r.ownReaders()
	readable := map[settings.Type]bool{
		settings.TypeSection: true, settings.TypeString: true, settings.TypeBool: true, settings.TypeList: true,
		settings.TypeEnvNames: true, settings.TypeInt: true, settings.TypeDuration: true, settings.TypeEnum: true,
	}
	var walk func(ks []settings.Key, path string)
	walk = func(ks []settings.Key, path string) {
		for _, k := range ks {
			p := join(path, k.Name)
			if _, ok := own[p]; !ok && k.Field != nil {
				assert.True(t, readable[k.Type], "%s of type %s has no reader", p, k.Type)
			}
			if k.Type == settings.TypeNames {
				p += ".*"
			}
			walk(k.Keys, p)
		}
	}
	walk(settings.TopLevel(), "")
}
