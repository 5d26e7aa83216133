// Package etag makes GET requests conditional: an http.RoundTripper that
// keeps the answers that carried an ETag, asks again with If-None-Match,
// and serves the kept answer on a 304. GitHub does not count a 304 against
// its rate limit, so polling an unchanged resource (the check runs of a
// commit whose CI has not moved) is nearly free.
package etag

import (
	"bytes"
	"container/list"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// Cache is the RoundTripper. It is safe for concurrent use.
type Cache struct {
	next    http.RoundTripper
	max     int
	maxBody int
	hits    atomic.Int64

	mu      sync.Mutex
	order   *list.List // front = most recently used
	entries map[string]*list.Element
}

type entry struct {
	key    string
	etag   string
	header http.Header
	body   []byte
}

// NewCache returns a cache of up to size answers (default 1024), each of
// at most 4 MiB, in front of next.
func NewCache(next http.RoundTripper, size int) *Cache {
	if size <= 0 {
		size = 1024
	}
	return &Cache{next: next, max: size, maxBody: 4 << 20, order: list.New(), entries: map[string]*list.Element{}}
}

// RoundTrip sends req, made conditional when the cache holds an answer
// for it, and hands every answer up as a response.
func (c *Cache) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Header.Get("If-None-Match") != "" || req.Header.Get("Range") != "" {
		return c.next.RoundTrip(req)
	}
	// Accept is part of the key: one URL answers differently per media
	// type. The token is not: a client has one.
	key := req.URL.String() + "\x00" + req.Header.Get("Accept")
	e := c.get(key)
	sent := req
	if e != nil {
		sent = req.Clone(req.Context())
		sent.Header.Set("If-None-Match", e.etag)
	}
	resp, err := c.next.RoundTrip(sent)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotModified && e != nil {
		c.hits.Add(1)
		return e.response(req, resp), nil
	}
	if err := c.keep(key, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// response is the kept answer, served for a 304, with the 304's fresh
// rate-limit, date and ETag headers.
func (e *entry) response(req *http.Request, notModified *http.Response) *http.Response {
	drain(notModified)
	h := e.header.Clone()
	for k, v := range notModified.Header {
		if strings.HasPrefix(k, "X-Ratelimit-") || k == "Date" || k == "Etag" {
			h[k] = v
		}
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK,
		Proto: notModified.Proto, ProtoMajor: notModified.ProtoMajor, ProtoMinor: notModified.ProtoMinor,
		Header: h, Body: io.NopCloser(bytes.NewReader(e.body)),
		ContentLength: int64(len(e.body)), Request: req,
	}
}

// keep remembers a 200 JSON answer that has an ETag, leaving resp's body
// readable.
func (c *Cache) keep(key string, resp *http.Response) error {
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusOK || etag == "" || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) <= c.maxBody {
		c.put(&entry{key: key, etag: etag, header: resp.Header.Clone(), body: body})
	}
	return nil
}

func (c *Cache) get(key string) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry)
}

func (c *Cache) put(e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.key]; ok {
		el.Value = e
		c.order.MoveToFront(el)
		return
	}
	c.entries[e.key] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.entries, old.Value.(*entry).key)
	}
}

// Hits is how many GETs were answered 304 and served from the cache.
func (c *Cache) Hits() int64 { return c.hits.Load() }

// Len is how many answers the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// drain reads what is left of a body (up to 1 MiB, so the connection can
// be reused) and closes it.
func drain(resp *http.Response) {
	if resp.Body != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
	}
}
