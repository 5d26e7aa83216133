package stages

// StateBackend is what keeps the issues' state (`state.backend`).
type StateBackend string

const (
	// StateFiles keeps it in files under the state directory (the
	// default: nothing to run).
	StateFiles StateBackend = "files"
	// StateEtcd keeps it in an etcd cluster, shared by several hosts.
	StateEtcd StateBackend = "etcd"
)

// State says where the issues' state is kept (`state:`, docs/CONFIG.md).
type State struct {
	Backend StateBackend
	Etcd    Etcd
	Nodes   Nodes // agents on nodes: docs/ARCHITECTURE.md §8, "Nodes"
}

// Nodes is `state.nodes`: On when written; Capacity is how many issues a
// node takes unless its `--capacity` says.
type Nodes struct {
	On       bool
	Capacity int
}

// Etcd is the cluster of backend etcd (`state.etcd`).
type Etcd struct {
	// Endpoints are its client URLs.
	Endpoints []string
	// Prefix is where the keys go; empty: /agenttree/ and the project.
	Prefix string
	// TLS is the client's certificates: paths, absolute (the file gives
	// them relative to its own directory); empty: none.
	TLS EtcdTLS
}

// EtcdTLS are the files of the client's TLS: the CA that signed the
// cluster's certificates, the client's certificate and its key.
type EtcdTLS struct{ CA, Cert, Key string }

// NodeLabel starts the label that gives an issue to a node: a person's.
const NodeLabel = "node:"
