// Package etcdtest starts a one-member etcd in a test's process
// (go.etcd.io/etcd/server/v3/embed), on loopback ports free a moment
// before, stopped when the test ends: plain, or serving TLS and asking
// for client certificates, which it makes with a CA of its own.
package etcdtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Cluster is a running member.
type Cluster struct {
	// Endpoint is its client URL.
	Endpoint string
	// CA, Cert and Key are the PEM files a client gives (TLS only): the
	// CA that signed the member's certificate, a client certificate it
	// signed too, and its key.
	CA, Cert, Key string
	// Stop stops the member before the test ends (a cluster gone away).
	Stop func()
}

// Start starts a plain member.
func Start(t testing.TB) *Cluster { return start(t, "") }

// StartTLS starts a member serving TLS that refuses clients without a
// certificate its CA signed; the files go in certDir.
func StartTLS(t testing.TB, certDir string) *Cluster { return start(t, certDir) }

func start(t testing.TB, certDir string) *Cluster {
	t.Helper()
	c := &Cluster{}
	var server transport.TLSInfo
	scheme := "http"
	if certDir != "" {
		scheme = "https"
		server = c.makeCerts(t, certDir)
	}
	var lastErr error
	for range 3 { // a port taken between freeURL and the listen: again
		client, peer := freeURL(t, scheme), freeURL(t, "http")
		cfg := memberConfig(t, "etcdtest", client, peer)
		cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
		cfg.ClientTLSInfo = server
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			lastErr = err
			continue
		}
		c.Stop = sync.OnceFunc(e.Close)
		t.Cleanup(c.Stop)
		select {
		case <-e.Server.ReadyNotify():
			c.Endpoint = client.String()
			return c
		case <-time.After(60 * time.Second):
			t.Fatal("embedded etcd was not ready in 60s")
		}
	}
	t.Fatalf("start embedded etcd: %v", lastErr)
	return nil
}

// memberConfig is a member named name, quiet and without fsync, serving
// clients at client and its peers at peer, its data in a directory of the
// test's.
func memberConfig(t testing.TB, name string, client, peer url.URL) *embed.Config {
	cfg := embed.NewConfig()
	cfg.Name = name
	cfg.Dir = t.TempDir()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.UnsafeNoFsync = true // a test's data outlives nothing
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	return cfg
}

// Client is a client of the member, with its client certificate when it
// asks for one, closed when the test ends.
func (c *Cluster) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	cfg := clientv3.Config{Endpoints: []string{c.Endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()}
	if c.CA != "" {
		info := transport.TLSInfo{CertFile: c.Cert, KeyFile: c.Key, TrustedCAFile: c.CA}
		tc, err := info.ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		cfg.TLS = tc
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// freeURL is a loopback URL on a port free a moment ago: embed needs its
// peer URL before it listens, so port 0 will not do for it.
func freeURL(t testing.TB, scheme string) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return url.URL{Scheme: scheme, Host: l.Addr().String()}
}

// makeCerts writes a CA, the member's certificate (for 127.0.0.1) and a
// client's, each with its key, into dir; it returns the member's.
func (c *Cluster) makeCerts(t testing.TB, dir string) transport.TLSInfo {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caKey := newKey(t)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "etcdtest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER := sign(t, ca, ca, caKey, caKey)
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	c.CA = writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", caDER)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage, file string) (cert, key string) {
		k := newKey(t)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der := sign(t, tmpl, caCert, k, caKey)
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return writePEM(t, filepath.Join(dir, file+".pem"), "CERTIFICATE", der),
			writePEM(t, filepath.Join(dir, file+"-key.pem"), "EC PRIVATE KEY", kder)
	}
	serverCert, serverKey := leaf(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, "server")
	c.Cert, c.Key = leaf(3, "agenttree", x509.ExtKeyUsageClientAuth, "client")
	return transport.TLSInfo{CertFile: serverCert, KeyFile: serverKey, TrustedCAFile: c.CA, ClientCertAuth: true}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sign(t testing.TB, tmpl, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) []byte {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func writePEM(t testing.TB, path, kind string, der []byte) string {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
