package edge

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
)

// send passes next's answer on: a 304 when it is a GET's 200 the client
// has already, otherwise as it is, charged to the rate limit.
func (e *Edge) send(w http.ResponseWriter, r *http.Request, rt Route, key countKey, rec *httptest.ResponseRecorder, rl *rateLimit) {
	if r.Method == http.MethodGet && rec.Code == http.StatusOK && !rt.Public {
		etag := etagOf(rec.Body.Bytes())
		w.Header().Set("ETag", etag)
		w.Header().Set("Cache-Control", "private, max-age=60, s-maxage=60")
		if etagMatch(r.Header.Get("If-None-Match"), etag) {
			// A 304 to an authorized request does not count against
			// the primary rate limit on GitHub.
			e.notModified[key]++
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if rl != nil {
		rl.charge()
		rl.setHeaders(w.Header(), rt.Resource)
	}
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// etagOf is a weak ETag of a body, as GitHub sends.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `W/"` + hex.EncodeToString(sum[:16]) + `"`
}

// etagMatch reports whether If-None-Match names etag, compared weakly.
func etagMatch(ifNoneMatch, etag string) bool {
	if ifNoneMatch == "" {
		return false
	}
	weak := func(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "W/") }
	for _, c := range strings.Split(ifNoneMatch, ",") {
		if strings.TrimSpace(c) == "*" || weak(c) == weak(etag) {
			return true
		}
	}
	return false
}
