package retry

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The retrier's behaviour against GitHub's answers is tested through the
// client, with the fake server, in package github.

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"7", 7 * time.Second, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"-3", 0, true},
		{"", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		d, ok := parseRetryAfter(tt.value, now)
		assert.Equal(t, tt.wantOK, ok, tt.value)
		assert.Equal(t, tt.want, d, tt.value)
	}
}
