package etag_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github/ghapi/etag"
)

// origin serves a JSON document per path with an ETag, answering 304 to a
// matching If-None-Match, and counts what it sent.
type origin struct {
	mu          sync.Mutex
	docs        map[string]string
	contentType string
	full, short int // 200s and 304s
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	doc, ok := o.docs[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256([]byte(doc))
	tag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", tag)
	if r.Header.Get("If-None-Match") == tag {
		o.short++
		w.WriteHeader(http.StatusNotModified)
		return
	}
	o.full++
	w.Header().Set("Content-Type", o.contentType)
	_, _ = io.WriteString(w, doc)
}

func (o *origin) set(path, doc string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.docs[path] = doc
}

func newOrigin(t *testing.T, contentType string) (*origin, *httptest.Server) {
	o := &origin{docs: map[string]string{}, contentType: contentType}
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	return o, srv
}

func get(t *testing.T, c *etag.Cache, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := c.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestAnUnchangedAnswerIsServedFromTheCache(t *testing.T) {
	o, srv := newOrigin(t, "application/json")
	o.set("/a", `{"n":1}`)
	c := etag.NewCache(http.DefaultTransport, 0)

	for range 3 {
		code, body := get(t, c, srv.URL+"/a")
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, `{"n":1}`, body)
	}
	assert.Equal(t, 1, o.full)
	assert.Equal(t, 2, o.short)
	assert.EqualValues(t, 2, c.Hits())

	o.set("/a", `{"n":2}`)
	_, body := get(t, c, srv.URL+"/a")
	assert.Equal(t, `{"n":2}`, body, "a change is a new answer, not a stale hit")
	assert.EqualValues(t, 2, c.Hits())
}

func TestOnlyJSONAnswersAreKept(t *testing.T) {
	o, srv := newOrigin(t, "text/plain")
	o.set("/log", "line 1\n")
	c := etag.NewCache(http.DefaultTransport, 0)
	for range 2 {
		_, body := get(t, c, srv.URL+"/log")
		assert.Equal(t, "line 1\n", body)
	}
	assert.Equal(t, 2, o.full)
	assert.Zero(t, c.Len())
}

func TestTheLeastRecentlyUsedAnswerGoesFirst(t *testing.T) {
	o, srv := newOrigin(t, "application/json")
	for i := range 3 {
		o.set(fmt.Sprintf("/%d", i), fmt.Sprintf(`{"n":%d}`, i))
	}
	c := etag.NewCache(http.DefaultTransport, 2)
	get(t, c, srv.URL+"/0")
	get(t, c, srv.URL+"/1")
	get(t, c, srv.URL+"/0") // 0 is now the most recently used
	get(t, c, srv.URL+"/2") // evicts 1
	assert.Equal(t, 2, c.Len())

	hits := c.Hits()
	get(t, c, srv.URL+"/0")
	assert.Equal(t, hits+1, c.Hits(), "kept")
	get(t, c, srv.URL+"/1")
	assert.Equal(t, hits+1, c.Hits(), "evicted: asked unconditionally")
}

func TestOnlyPlainGETsAreConditional(t *testing.T) {
	o, srv := newOrigin(t, "application/json")
	o.set("/a", `{}`)
	c := etag.NewCache(http.DefaultTransport, 0)
	get(t, c, srv.URL+"/a")

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/a", nil)
	require.NoError(t, err)
	req.Header.Set("Range", "bytes=0-1")
	resp, err := c.RoundTrip(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, 2, o.full, "a range request is sent as it is")
	assert.Zero(t, c.Hits())
}
