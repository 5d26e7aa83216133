package demo

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
)

// logTail reads the controller's JSON log as it grows.
type logTail struct {
	path   string
	offset int64
}

// hookResults are the controller's new log lines about an issue that the
// timeline does not already tell from the issue itself (its moves, the
// messages delivered): what its hooks did, such as opening the PR.
func (l *logTail) hookResults() []string {
	f, err := os.Open(l.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(l.offset, io.SeekStart); err != nil {
		return nil
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil // no whole line yet
	}
	l.offset += int64(end + 1)
	var out []string
	for _, line := range bytes.Split(data[:end], []byte("\n")) {
		var rec struct {
			Msg   string `json:"msg"`
			Issue int    `json:"issue"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Issue == 0 || told(rec.Msg) {
			continue
		}
		out = append(out, rec.Msg)
	}
	return out
}

// told says whether the timeline tells msg's event from the issue itself.
func told(msg string) bool {
	for _, p := range []string{"stepped back", "moved ", "message delivered", "a person is needed"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// forgeRequests is what the controller's last words (`controller stopped`)
// say it asked the forge, counted as GitHub counts requests.
func forgeRequests(path string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	var n int64
	found := false
	for _, line := range bytes.Split(data, []byte("\n")) {
		var rec struct {
			Msg      string `json:"msg"`
			Requests *int64 `json:"forge_requests"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Msg == "controller stopped" && rec.Requests != nil {
			n, found = *rec.Requests, true
		}
	}
	return n, found
}
