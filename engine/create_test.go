package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

func TestCreateBoundsTheTitle(t *testing.T) {
	tests := []struct {
		name    string
		title   string
		wantErr string
	}{
		{name: "at the limit", title: strings.Repeat("a", engine.MaxTitleLen)},
		{name: "at the limit in runes, not bytes", title: strings.Repeat("é", engine.MaxTitleLen)},
		{name: "surrounding spaces do not count", title: "  " + strings.Repeat("a", engine.MaxTitleLen) + "  "},
		{name: "one over", title: strings.Repeat("a", engine.MaxTitleLen+1),
			wantErr: "an issue's title is at most 200 characters; this one has 201: give it a short title and put the details in the issue's documents"},
		{name: "one over in runes", title: strings.Repeat("é", engine.MaxTitleLen+1), wantErr: "this one has 201"},
		{name: "a pasted description", title: strings.Repeat("word ", 1000), wantErr: "this one has 4999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, testpipeline.Read(t, "planned"))
			iss, err := e.Create(context.Background(), engine.NewIssue{Title: tt.title})
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, strings.TrimSpace(tt.title), iss.Title)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			list, err := e.Store.List()
			require.NoError(t, err)
			assert.Empty(t, list, "nothing is written for a title too long")
		})
	}
}
