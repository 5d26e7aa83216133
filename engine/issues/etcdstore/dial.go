package etcdstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Config is how Dial reaches a cluster: `state.etcd` of the config
// (docs/CONFIG.md), its paths absolute.
type Config struct {
	Endpoints []string
	Prefix    string
	// CA, Cert and Key are PEM files: the CA that signed the members'
	// certificates (empty: the system's), the client's certificate and
	// its key (both or neither).
	CA, Cert, Key string
	// DialTimeout bounds the connection and Dial's first read (5s when
	// zero): a cluster that does not answer is an error, not a hang.
	DialTimeout time.Duration
}

// DefaultDialTimeout is Config.DialTimeout's default.
const DefaultDialTimeout = 5 * time.Second

// Dial connects to the cluster c names and reads its last id once, so
// that a cluster out of reach, or certificates it refuses, are said
// before any command starts its work. The Store owns the client: Close
// closes both.
func Dial(ctx context.Context, c Config, opts ...Option) (*Store, error) {
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	tc, err := c.tls()
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: c.Endpoints, TLS: tc, DialTimeout: c.DialTimeout,
		// The client's log would go to the command's stderr, between its
		// own lines; its errors come back as errors.
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, c.unreachable(err)
	}
	s := New(cli, c.Prefix, opts...)
	s.own = true
	rctx, cancel := context.WithTimeout(ctx, c.DialTimeout)
	defer cancel()
	if _, err := s.LastID(rctx); err != nil {
		s.Close()
		return nil, c.unreachable(err)
	}
	return s, nil
}

// unreachable says which cluster did not answer, and how fast it had to.
func (c Config) unreachable(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s (%w)", c.DialTimeout, err)
	}
	return &UnreachableError{Endpoints: c.Endpoints, Err: err}
}

// UnreachableError is a cluster Dial could not read from.
type UnreachableError struct {
	Endpoints []string
	Err       error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("etcd at %s: %v", strings.Join(e.Endpoints, ", "), e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// tls is the client's TLS: nil for http endpoints without certificates.
func (c Config) tls() (*tls.Config, error) {
	https := false
	for _, e := range c.Endpoints {
		https = https || strings.HasPrefix(e, "https://")
	}
	if !https && c.CA == "" && c.Cert == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CA != "" {
		pem, err := os.ReadFile(c.CA)
		if err != nil {
			return nil, fmt.Errorf("etcd's CA certificate: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd's CA certificate %s holds no PEM certificate", c.CA)
		}
	}
	if c.Cert != "" || c.Key != "" {
		pair, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, fmt.Errorf("etcd's client certificate %s and key %s: %w", c.Cert, c.Key, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}
