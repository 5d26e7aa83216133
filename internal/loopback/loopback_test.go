package loopback

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:0": true, "127.1.2.3:80": true, "[::1]:8080": true, "localhost:8080": true, "LocalHost:1": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:80": false, "192.0.2.1:80": false, "example.com:80": false, "127.0.0.1": false,
	} {
		assert.Equal(t, want, Addr(addr), addr)
	}
}
