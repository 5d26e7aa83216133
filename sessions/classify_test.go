package sessions_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/sessions"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		status int
		output string
		want   sessions.ExitKind
	}{
		{"timeout(1)", 124, "working...", sessions.ExitTimeout},
		{"killed", 137, "Error: 401 Unauthorized", sessions.ExitTimeout},
		{"bad key", 1, "Error: Invalid API key. Run /login", sessions.ExitAuth},
		{"http 401", 1, "request failed: HTTP 401", sessions.ExitAuth},
		{"unauthorized", 2, "UNAUTHORIZED", sessions.ExitAuth},
		{"rate limit", 1, "Rate limit reached; try again later", sessions.ExitRateLimit},
		{"429", 1, "status 429 Too Many Requests", sessions.ExitRateLimit},
		{"quota", 1, "You exceeded your current quota", sessions.ExitRateLimit},
		{"auth before rate limit", 1, "429 after authentication failed", sessions.ExitAuth},
		{"a number that contains 401", 1, "processed 14012 rows", sessions.ExitOther},
		{"a word that contains quota", 1, "quotas.go:12: panic", sessions.ExitOther},
		{"crash", 2, "panic: nil map", sessions.ExitOther},
		{"clean exit", 0, "bye", sessions.ExitOther},
		{"only the last lines count", 1, "GET /login 401\n" + repeatLine("compiling", 15) + "panic: boom", sessions.ExitOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, sessions.Classify(tt.status, tt.output))
		})
	}
}

func repeatLine(line string, n int) string { return strings.Repeat(line+"\n", n) }
