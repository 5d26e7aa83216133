package toplevel

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/settings"
)

// state reads `state:` and checks that its keys fit its backend: etcd
// needs the cluster's endpoints, and a client certificate its key.
func (r *reader) state(k settings.Key, parent any, v *yaml.Node, name string) bool {
	set := r.section(k, parent, v, "state", name)
	if set == nil {
		return false
	}
	d, st := r.d, &r.cfg.State
	etcd := set["etcd"]
	st.Nodes.On = set["nodes"] != nil
	if st.Backend != stages.StateEtcd {
		if etcd != nil {
			d.Warnf(d.Pos(etcd), "write `backend: etcd` to keep the state there", "state.etcd is not read: the state is kept in files")
		}
		if n := set["nodes"]; n != nil {
			// Nodes find each other and their issues in the shared state.
			d.Errorf(d.Pos(n), "write `backend: etcd` with the cluster under `state.etcd`, or leave `nodes:` out", "state.nodes needs the state in etcd: nodes on other hosts share it there")
		}
		return true
	}
	at := d.Pos(v)
	if n := set["backend"]; n != nil {
		at = d.Pos(n)
	}
	if len(st.Etcd.Endpoints) == 0 {
		d.Errorf(at, "add `etcd: {endpoints: [https://HOST:2379]}` under `state:`", "state.backend etcd needs state.etcd.endpoints")
	}
	// The client speaks TLS to every member or to none, as its first
	// endpoint says: a TLS block the client would not use, or certificates
	// sent to some members only, is a mistake to say here, not found out
	// from a refused connection.
	tls, https := st.Etcd.TLS, 0
	for _, e := range st.Etcd.Endpoints {
		if strings.HasPrefix(e, "https://") {
			https++
		}
	}
	where := func(key string) stages.Pos {
		if n := child(etcd, key); n != nil {
			return d.Pos(n)
		}
		if etcd != nil {
			return d.Pos(etcd)
		}
		return at
	}
	switch {
	case (tls.Cert == "") != (tls.Key == ""):
		d.Errorf(where("tls"), "write both `cert:` and `key:` under `state.etcd.tls`, or neither", "state.etcd.tls has a client certificate without its key, or a key without its certificate")
	case https > 0 && https < len(st.Etcd.Endpoints):
		d.Errorf(where("endpoints"), "write every endpoint with `https://`, or every one with `http://`", "state.etcd.endpoints mix http and https: the client speaks TLS to every member or to none")
	case https == 0 && tls != (stages.EtcdTLS{}):
		d.Errorf(where("tls"), "write the endpoints with `https://`, or leave `tls:` out", "state.etcd.tls is given, but the endpoints are http://: it would not be used")
	}
	return true
}

// child is the value of key in the mapping m, nil when m is no mapping
// or has no such key.
func child(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// etcdEndpoints reads the endpoints, each an http(s) URL with a host and
// a port, each mistake named where it is written.
func etcdEndpoints(d *diag.Collector, v *yaml.Node, name string, dst *[]string) bool {
	if !d.StringsVar(v, dst) {
		return false
	}
	ok := true
	for i, e := range *dst {
		node := v
		if v.Kind == yaml.SequenceNode && i < len(v.Content) {
			node = v.Content[i]
		}
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") {
			d.Errorf(d.Pos(node), "write a member's client URL, e.g. `https://etcd-1.example.com:2379`", "bad %s %q: want http(s)://HOST:PORT", name, e)
			ok = false
		}
	}
	return ok
}

// etcdPrefix reads the keys' prefix: absolute, as etcd's tools write
// keys, and without a trailing `/` (the keys add their own).
func etcdPrefix(d *diag.Collector, v *yaml.Node, dst *string) {
	if !d.StringVar(v, dst) {
		return
	}
	if !strings.HasPrefix(*dst, "/") || strings.TrimRight(*dst, "/") == "" {
		d.Errorf(d.Pos(v), "write a path of keys, e.g. `prefix: /agenttree/myapp`", "bad state.etcd.prefix %q: want one starting with `/` and naming something", *dst)
		return
	}
	*dst = strings.TrimRight(*dst, "/")
}

// tlsFile reads a path of state.etcd.tls, relative to the config file.
func (r *reader) tlsFile(k settings.Key, parent any, v *yaml.Node, name string) bool {
	d, dst := r.d, k.Field(parent).(*string)
	if !d.StringVar(v, dst) {
		return false
	}
	switch p := *dst; {
	case strings.TrimSpace(p) == "":
		d.Errorf(d.Pos(v), fmt.Sprintf("leave %s out, or name the file", name), "%s is empty", name)
		return false
	case strings.HasPrefix(p, "~"):
		d.Errorf(d.Pos(v), "write the path in full, or relative to the config file", "%s %q starts with `~`, which is not expanded", name, p)
		return false
	case !filepath.IsAbs(p):
		if abs, err := filepath.Abs(filepath.Join(filepath.Dir(d.File), p)); err == nil {
			*dst = abs
		}
	}
	return true
}
