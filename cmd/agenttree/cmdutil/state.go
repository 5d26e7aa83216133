package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/stages"
)

// OpenStore opens the issue store of cfg: the state directory beside it,
// the issues' state kept where `state.backend` says (docs/CONFIG.md,
// docs/ARCHITECTURE.md §8). Over files, nothing of etcd is made: an
// agent's `next` costs what it did before etcd could be chosen.
func (a *App) OpenStore(ctx context.Context, cfg *stages.Config) (*issues.Store, error) {
	stateDir := StateDirOf(cfg.File)
	if cfg.State.Backend != stages.StateEtcd {
		return issues.Open(stateDir)
	}
	b, err := a.Etcd(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return issues.OpenWith(stateDir, b)
}

// EtcdTarget is how a build reaches an etcd cluster: its client URLs,
// the prefix of the issues' keys, and the PEM files of TLS (the CA, the
// client's certificate and key).
type EtcdTarget struct {
	Endpoints             []string
	Prefix, CA, Cert, Key string
}

// EtcdConfig is how cfg's `state.etcd` reaches its cluster, its prefix
// defaulted to /agenttree/ and the project (docs/CONFIG.md).
func EtcdConfig(cfg *stages.Config) EtcdTarget {
	e := cfg.State.Etcd
	prefix := e.Prefix
	if prefix == "" {
		prefix = "/agenttree/" + cfg.ProjectName()
	}
	return EtcdTarget{Endpoints: e.Endpoints, Prefix: prefix, CA: e.TLS.CA, Cert: e.TLS.Cert, Key: e.TLS.Key}
}

// EtcdBackend is the etcd backend a build with etcd dials (dialEtcd).
type EtcdBackend interface {
	backend.Porter
	Close() error
}

// Etcd is the etcd backend of cfg's `state.etcd`, whatever its
// `state.backend` says (`migrate` reads and writes both), dialled once per
// invocation for each cluster and prefix: the controller opens the engine
// anew each time its config changes, and keeps one connection. Close
// closes them.
func (a *App) Etcd(ctx context.Context, cfg *stages.Config) (EtcdBackend, error) {
	c := EtcdConfig(cfg)
	key := fmt.Sprintf("%q", c)
	if a.stores == nil {
		a.stores = &openStores{etcd: map[string]EtcdBackend{}}
	}
	st := a.stores
	st.mu.Lock()
	defer st.mu.Unlock()
	if s := st.etcd[key]; s != nil {
		return s, nil
	}
	s, err := dialEtcd(ctx, c)
	if errors.Is(err, errNoEtcd) {
		return nil, fmt.Errorf("%s keeps the issues' state in etcd (state.etcd): %w", cfg.File, err)
	}
	if err != nil {
		return nil, unreachable(cfg, c, err)
	}
	st.etcd[key] = s
	return s, nil
}

// Term is this controller's term as the one elected among those that
// share an etcd cluster (controller/leader.Term).
type Term interface {
	// Done is closed when the term ends.
	Done() <-chan struct{}
	// Held is nil while the term lasts.
	Held(context.Context) error
	// Within is ctx, ended too when the term ends.
	Within(context.Context) (context.Context, context.CancelFunc)
	// Resign ends the term and lets another be elected at once.
	Resign(context.Context) error
}

// Campaign waits until this controller is elected among those that
// share cfg's etcd cluster and prefix, and fences the store's writes by
// its term from then on (docs/ARCHITECTURE.md §8). name says who this is
// to the others; waiting is told who leads while it waits.
func (a *App) Campaign(ctx context.Context, cfg *stages.Config, name string, waiting func(leader string)) (Term, error) {
	b, err := a.Etcd(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return campaign(ctx, b, electionPrefix(cfg), name, waiting)
}

// Resign resigns term within a bound, even when ctx has ended: the lease
// revoked, so that another is elected at once (when the cluster answers).
func Resign(ctx context.Context, term Term) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return term.Resign(rctx)
}

// CampaignWithin is Campaign waiting at most wait to be elected: past
// it, a *LeadsError naming the one that leads.
func (a *App) CampaignWithin(ctx context.Context, cfg *stages.Config, name string, wait time.Duration) (Term, error) {
	// The cluster is reached first, within its own dial bound: one out of
	// reach is said as such, not as a campaign that lost.
	if _, err := a.Etcd(ctx, cfg); err != nil {
		return nil, err
	}
	var leader atomic.Value // who leads, told from the election's watch
	cctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	term, err := a.Campaign(cctx, cfg, name, func(who string) { leader.Store(who) })
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		if who, ok := leader.Load().(string); ok {
			return nil, &LeadsError{Leader: who, Config: cfg.File}
		}
		return nil, fmt.Errorf("not elected within %s, though no controller was seen to lead %s: %w", wait, cfg.File, err)
	}
	return term, err
}

// LeadsError is a campaign that was not elected in its time: Leader leads
// the controllers of Config's repository.
type LeadsError struct{ Leader, Config string }

func (e *LeadsError) Error() string {
	return fmt.Sprintf("a controller leads %s through etcd (%s)", e.Config, e.Leader)
}

// EtcdLeader is who leads the controllers that share cfg's etcd cluster
// and prefix, as its key names it (host and pid); "" when none does.
func (a *App) EtcdLeader(ctx context.Context, cfg *stages.Config) (string, error) {
	b, err := a.Etcd(ctx, cfg)
	if err != nil {
		return "", err
	}
	return leaderOf(ctx, b, electionPrefix(cfg))
}

// electionPrefix is where the controllers of cfg's repository campaign.
func electionPrefix(cfg *stages.Config) string { return EtcdConfig(cfg).Prefix + "/leader" }

// openStores are the backends an invocation dialled.
type openStores struct {
	mu   sync.Mutex
	etcd map[string]EtcdBackend
}

// Close closes what the invocation opened: the etcd connections, their
// locks' session ended at once rather than when its lease runs out.
func (a *App) Close() error {
	if a.stores == nil {
		return nil
	}
	a.stores.mu.Lock()
	defer a.stores.mu.Unlock()
	var errs []error
	for k, s := range a.stores.etcd {
		errs = append(errs, s.Close())
		delete(a.stores.etcd, k)
	}
	return errors.Join(errs...)
}

// unreachable says that the state is in etcd and could not be read, and
// what to run to see why.
func unreachable(cfg *stages.Config, c EtcdTarget, err error) error {
	check := []string{"etcdctl", "--endpoints=" + strings.Join(c.Endpoints, ",")}
	for _, f := range [][2]string{{"--cacert", c.CA}, {"--cert", c.Cert}, {"--key", c.Key}} {
		if f[1] != "" {
			check = append(check, f[0]+"="+f[1])
		}
	}
	check = append(check, "endpoint", "health")
	what := fmt.Sprintf("the issues' state is in etcd (state.backend in %s), which cannot be read", cfg.File)
	if cfg.State.Backend != stages.StateEtcd {
		what = fmt.Sprintf("the etcd cluster state.etcd names in %s cannot be read", cfg.File)
	}
	return fmt.Errorf("%s: %w; check that the cluster runs and this host reaches it with `%s`, and that state.etcd names its client URLs and this host's certificates",
		what, err, strings.Join(check, " "))
}
