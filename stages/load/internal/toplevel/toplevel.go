// Package toplevel reads the settings at the top of a config file, all but
// its stages and flows, over the defaults: the forge, how the controller
// polls, ticks and gives up, and where agents and people are told. It
// reads them by their declaration (package stages/settings): each key
// into the field the declaration binds, checked against its type, its
// values and its least value; the keys that need more than that have
// readers of their own here (ownReaders).
package toplevel

import (
	"reflect"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/ledger"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
	"github.com/agenttree/agenttree/stages/settings"
)

// shaped are the top-level keys read before the settings, as they give
// the file its shape; known here for suggestions.
var shaped = []string{"stages", "flows", "default_flow"}

// ownReader reads the value v of the key k, named name, into parent, the
// struct that holds k; it reports whether it could.
type ownReader func(k settings.Key, parent any, v *yaml.Node, name string) bool

// reader reads the settings of one file.
type reader struct {
	d   *diag.Collector
	led *ledger.Ledger
	cfg *stages.Config
	// own are the keys read by more than their type, by path: the dotted
	// keys from the top, with `*` for the entry of a mapping of names
	// ("tmux.session", "roles.*.agents").
	own map[string]ownReader
	// refs are the agents the roles name, checked once every agent is
	// read; defaultTool is the earlier tool's `default_tool:`.
	refs        []agentRef
	defaultTool *yaml.Node
}

// Read reads the settings at the top of the file over the defaults:
// everything but the stages and flows. Its templates go to led, checked
// once every hook's outputs are known.
func Read(d *diag.Collector, led *ledger.Ledger, pairs []yamlnode.Pair) *stages.Config {
	r := &reader{d: d, led: led, cfg: settings.Defaults()}
	r.own = r.ownReaders()
	if d.Lax {
		// The earlier tool kept its PRs on GitHub and nowhere else: its
		// files say no `forge:`, and mean GitHub (docs/CONFIG.md).
		r.cfg.Forge = stages.ForgeGitHub
	}
	r.read(settings.TopLevel(), r.cfg, pairs, "", "the top level", shaped...)
	if d.Lax {
		r.finishCompat()
	}
	checkAgentRefs(d, r.cfg, r.refs)
	return r.cfg
}

// read reads the pairs ps of the mapping at path, named where, into
// parent by the declaration ks, reporting keys it does not declare;
// shaped are keys read elsewhere, known for suggestions. It returns the
// values it could read, by key.
func (r *reader) read(ks []settings.Key, parent any, ps []yamlnode.Pair, path, where string, shaped ...string) map[string]*yaml.Node {
	set := map[string]*yaml.Node{}
	for _, p := range ps {
		i := slices.IndexFunc(ks, func(k settings.Key) bool { return k.Name == p.Key.Value && r.reads(k, path) })
		if i < 0 {
			r.d.UnknownKey(p.Key, where, append(r.known(ks, path), shaped...), "")
			continue
		}
		name := settingName(where, p.Key.Value)
		r.d.Name(p.Val, name)
		if r.value(ks[i], parent, p.Val, join(path, ks[i].Name), name) {
			set[ks[i].Name] = p.Val
		}
	}
	return set
}

// reads reports whether the key k at path is read here, in this file's
// form: the earlier tool's spellings only in its form, and not the keys
// read elsewhere.
func (r *reader) reads(k settings.Key, path string) bool {
	if k.Compat && !r.d.Lax {
		return false
	}
	_, own := r.own[join(path, k.Name)]
	return own || k.Field != nil
}

// known lists the keys of ks read at path.
func (r *reader) known(ks []settings.Key, path string) []string {
	var out []string
	for _, k := range ks {
		if r.reads(k, path) {
			out = append(out, k.Name)
		}
	}
	return out
}

// value reads v, the value of the key k at path named name, into the
// field of parent the declaration binds.
func (r *reader) value(k settings.Key, parent any, v *yaml.Node, path, name string) bool {
	if own, ok := r.own[path]; ok {
		return own(k, parent, v, name)
	}
	d, field := r.d, k.Field(parent)
	switch k.Type {
	case settings.TypeSection:
		if !d.IsMap(v, name) {
			return false
		}
		r.read(k.Keys, field, yamlnode.Pairs(v), path, name)
		return true
	case settings.TypeString:
		return d.StringVar(v, field.(*string))
	case settings.TypeBool:
		return d.BoolVar(v, field.(*bool))
	case settings.TypeList:
		return d.StringsVar(v, field.(*[]string))
	case settings.TypeEnvNames:
		return d.EnvNamesVar(v, name, field.(*[]string))
	case settings.TypeInt:
		if least, ok := k.MinInt(); ok {
			return d.IntAtLeast(v, field.(*int), least, name)
		}
		return d.IntVar(v, field.(*int))
	case settings.TypeDuration:
		if k.Positive {
			return d.PositiveDurationVar(v, field.(*time.Duration))
		}
		if least, ok := k.MinDuration(); ok {
			return d.DurationAtLeast(v, field.(*time.Duration), least, name)
		}
		return d.DurationVar(v, field.(*time.Duration))
	case settings.TypeEnum:
		var s string
		errs := d.Errors()
		diag.OneOf(d, v, &s, name, k.Enum...)
		if s != "" {
			reflect.ValueOf(field).Elem().SetString(s)
		}
		return d.Errors() == errs
	}
	panic("toplevel: no reader for " + path + " of type " + string(k.Type))
}

// join is the path of key in the mapping at path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// settingName is the dotted name of key in where: `ci_polling.max_retries`.
func settingName(where, key string) string {
	if where == "the top level" {
		return key
	}
	return where + "." + key
}

// section reads v, the mapping of the section k named name, into parent's
// field, returning the values it could read, by key; nil when v is not a
// mapping.
func (r *reader) section(k settings.Key, parent any, v *yaml.Node, path, name string) map[string]*yaml.Node {
	if !r.d.IsMap(v, name) {
		return nil
	}
	return r.read(k.Keys, k.Field(parent), yamlnode.Pairs(v), path, name)
}
