package etcdstore

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
)

// Dial reaches a cluster that asks for client certificates with the
// ones given, and says which cluster it could not read from, within its
// timeout, when the certificates are refused or nothing listens.
func TestDial(t *testing.T) {
	c := etcdtest.StartTLS(t, filepath.Join(t.TempDir(), "certs"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	silent := "https://" + l.Addr().String() // accepts, never answers
	t.Cleanup(func() { l.Close() })

	tests := []struct {
		name string
		cfg  Config
		err  string
	}{
		{"client certificates", Config{Endpoints: []string{c.Endpoint}, CA: c.CA, Cert: c.Cert, Key: c.Key}, ""},
		{"no client certificate", Config{Endpoints: []string{c.Endpoint}, CA: c.CA}, "etcd at " + c.Endpoint + ": "},
		{"another CA", Config{Endpoints: []string{c.Endpoint}, Cert: c.Cert, Key: c.Key}, "etcd at " + c.Endpoint + ": "},
		{"nothing answers", Config{Endpoints: []string{silent}, CA: c.CA, Cert: c.Cert, Key: c.Key}, "etcd at " + silent + ": no answer within 1s"},
		{"a key that is not one", Config{Endpoints: []string{c.Endpoint}, CA: c.CA, Cert: c.Cert, Key: c.CA}, "etcd's client certificate"},
		{"a missing CA", Config{Endpoints: []string{c.Endpoint}, CA: c.CA + ".gone"}, "etcd's CA certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Prefix, tt.cfg.DialTimeout = "/dial", time.Second
			start := time.Now()
			s, err := Dial(context.Background(), tt.cfg)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				assert.Less(t, time.Since(start), 20*time.Second, "bounded by the dial timeout")
				return
			}
			require.NoError(t, err)
			defer s.Close()
			ids, err := s.IDs(context.Background())
			require.NoError(t, err)
			assert.Empty(t, ids)
		})
	}
}
