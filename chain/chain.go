// Package chain keeps hash-chained, append-only JSON Lines logs: every
// line holds the hash of the line before it and its own, so a line
// edited, removed, inserted or moved breaks the chain where it happened.
//
// A line is one JSON object whose first member is "prev", the previous
// line's hash ("" on the first line), and whose last member is "hash":
//
//	{"prev":"<hex>",<the caller's members>,"hash":"<hex>"}
//
// hash is the SHA-256, in lower-case hex, of the line's bytes without
// the hash member, closing brace kept: {"prev":"<hex>",<members>}. The
// bytes hashed are the bytes on disk, so any change to a line, even of
// white space, shows; and the lines stay plain JSON for jq and friends.
//
// The hash needs no secret. It catches edits made by hand and by tools
// that do not know to recompute it; whoever knows the format can rewrite
// a log and recompute every hash. Lines cut from the end leave a valid,
// shorter chain: the last hash must also be kept elsewhere (agenttree
// keeps it in the file the log records) for that to show.
package chain

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Line is one line of a log, its own hash checked.
type Line struct {
	// N is the line's number, from 1; 0 when read from the end (Tail).
	N int
	// Offset is where the line starts in the log.
	Offset int64
	// Prev is the previous line's hash, "" on the first line.
	Prev string
	// Hash is the line's own hash.
	Hash string
	// Body is the line's JSON object without its hash member: decode it
	// into the type that was appended (its prev member is ignored).
	Body []byte
}

// Decode unmarshals the line's members into v.
func (l Line) Decode(v any) error { return json.Unmarshal(l.Body, v) }

// Reasons a log does not verify, wrapped by *Error.
var (
	// ErrTorn is an incomplete last line: an append cut short by a crash.
	ErrTorn = errors.New("it is incomplete (an append cut short)")
	// ErrFormat is a line that is not a chain line at all.
	ErrFormat = errors.New("it is not a line of a hash chain")
	// ErrHash is a line whose hash does not match its content: it was
	// changed after it was written.
	ErrHash = errors.New("its hash does not match its content (changed after it was written)")
	// ErrLink is a line that does not name the line before it as its
	// previous one: lines were removed, inserted or moved.
	ErrLink = errors.New("it does not follow the line before it (lines removed, inserted or reordered)")
)

// Error says which line of a log is wrong and why.
type Error struct {
	N      int   // the line's number, from 1
	Offset int64 // where the line starts
	Err    error // ErrTorn, ErrFormat, ErrHash or ErrLink
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %v", e.N, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// hashLen is the length of a hash in hex.
const hashLen = 2 * sha256.Size

// Encode returns the line that follows prev with data's members, with
// its line feed. data must marshal to a JSON object without members
// named prev or hash.
func Encode(prev string, data any) ([]byte, Line, error) {
	if !validHash(prev, true) {
		return nil, Line{}, fmt.Errorf("chain: previous hash %q is not a SHA-256 in hex", prev)
	}
	members, err := json.Marshal(data)
	if err != nil {
		return nil, Line{}, fmt.Errorf("chain: %w", err)
	}
	members = bytes.TrimSpace(members)
	if len(members) < 2 || members[0] != '{' || members[len(members)-1] != '}' {
		return nil, Line{}, fmt.Errorf("chain: a line's data must be a JSON object, not %.20s", members)
	}
	body := make([]byte, 0, len(members)+hashLen+32)
	body = append(body, `{"prev":"`...)
	body = append(body, prev...)
	body = append(body, '"')
	if inner := members[1 : len(members)-1]; len(bytes.TrimSpace(inner)) > 0 {
		body = append(append(body, ','), inner...)
	}
	body = append(body, '}')
	sum := hashOf(body)
	line := make([]byte, 0, len(body)+hashLen+12)
	line = append(line, body[:len(body)-1]...)
	line = append(line, `,"hash":"`...)
	line = append(line, sum...)
	line = append(line, "\"}\n"...)
	return line, Line{Prev: prev, Hash: sum, Body: body}, nil
}

// Parse checks one line (without its line feed) against its own hash.
// It does not know the line before it: Verify checks the links. It reads
// prev and hash where Encode puts them and hashes the rest, without
// parsing the JSON in between: a line whose hash checks out is a line
// Encode wrote (or one written by someone who recomputed the hash, which
// no check without a secret tells apart), and what it holds is for the
// caller to decode.
func Parse(line []byte) (Line, error) {
	const head, hashKey = `{"prev":"`, `,"hash":"`
	rest, ok := bytes.CutPrefix(line, []byte(head))
	end := bytes.IndexByte(rest, '"')
	if !ok || end < 0 {
		return Line{}, ErrFormat
	}
	prev := string(rest[:end])
	suffixLen := len(hashKey) + hashLen + len(`"}`)
	if !validHash(prev, true) || len(line) < len(head)+end+1+suffixLen {
		return Line{}, ErrFormat
	}
	suffix := line[len(line)-suffixLen:]
	sum := string(suffix[len(hashKey) : len(hashKey)+hashLen])
	if !bytes.HasPrefix(suffix, []byte(hashKey)) || !bytes.HasSuffix(suffix, []byte(`"}`)) || !validHash(sum, false) {
		return Line{}, ErrFormat
	}
	body := append(line[:len(line)-suffixLen:len(line)-suffixLen], '}')
	if c := body[len(head)+end+1]; c != ',' && c != '}' {
		return Line{}, ErrFormat
	}
	if hashOf(body) != sum {
		return Line{}, ErrHash
	}
	return Line{Prev: prev, Hash: sum, Body: body}, nil
}

// Verify reads a whole log and checks every line's hash and link. It
// returns the lines that verify, in order, up to the first that does
// not, and an *Error for that one. An empty log verifies.
func Verify(r io.Reader) ([]Line, error) {
	br := bufio.NewReader(r)
	var (
		lines  []Line
		offset int64
		prev   string
	)
	for n := 1; ; n++ {
		raw, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) && len(raw) == 0 {
			return lines, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return lines, fmt.Errorf("chain: read line %d: %w", n, err)
		}
		if errors.Is(err, io.EOF) {
			return lines, &Error{N: n, Offset: offset, Err: ErrTorn}
		}
		line, perr := Parse(raw[:len(raw)-1])
		switch {
		case perr != nil:
			return lines, &Error{N: n, Offset: offset, Err: perr}
		case line.Prev != prev:
			return lines, &Error{N: n, Offset: offset, Err: ErrLink}
		}
		line.N, line.Offset = n, offset
		lines = append(lines, line)
		prev = line.Hash
		offset += int64(len(raw))
	}
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// validHash reports whether h is a SHA-256 in lower-case hex (or "",
// when empty is allowed: the first line's previous hash).
func validHash(h string, emptyOK bool) bool {
	if h == "" {
		return emptyOK
	}
	if len(h) != hashLen {
		return false
	}
	for _, c := range []byte(h) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
