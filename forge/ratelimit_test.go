package forge_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/forge"
)

// A rate limit names the forge that set it, and only that one: a forge
// that does not say is not called GitHub.
func TestRateLimitErrorNamesItsForge(t *testing.T) {
	for _, tc := range []struct {
		err  forge.RateLimitError
		want string
	}{
		{forge.RateLimitError{Forge: "GitHub", RetryAfter: time.Minute}, "GitHub primary rate limit; retry after 1m0s"},
		{forge.RateLimitError{Forge: "GitLab", RetryAfter: 30 * time.Second, Secondary: true}, "GitLab secondary rate limit; retry after 30s"},
		{forge.RateLimitError{RetryAfter: time.Second}, "the forge's primary rate limit; retry after 1s"},
	} {
		assert.Equal(t, tc.want, tc.err.Error())
		assert.ErrorIs(t, &tc.err, forge.ErrRateLimit)
	}
}
