package record_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/engine/issues/record"
)

func TestSlugify(t *testing.T) {
	tests := []struct {
		title string
		want  string
	}{
		{"Add login page", "add-login-page"},
		{"  Fix: the  (broken) build!! ", "fix-the-broken-build"},
		{"Ünïcödé title", "unicode-title"},
		{"Crème brûlée à la française", "creme-brulee-a-la-francaise"},
		{"Straße", "strasse"},
		{"Æsir Øresund Œuvre", "aesir-oresund-oeuvre"},
		{"Łódź Đakovo Þórr", "lodz-dakovo-thorr"},
		{"ＡＢＣ ﬁle", "abc-file"},
		{"fix 日本語 bug", "fix-bug"},
		{"emoji 🚀 launch", "emoji-launch"},
		{"tab\tand\nnewline", "tab-and-newline"},
		{"\x1b]0;pwned\x07", "0-pwned"},
		{"\u202eevil\u202c", "evil"},
		{"日本語", "issue"},
		{"", "issue"},
		{"---", "issue"},
		{strings.Repeat("a", 50), strings.Repeat("a", 40)},
		// The cut lands on a separator, which is trimmed.
		{strings.Repeat("b", 39) + " c", strings.Repeat("b", 39)},
		{strings.Repeat("é", 45), strings.Repeat("e", 40)},
	}
	for _, tt := range tests {
		t.Run(tt.title, func(t *testing.T) {
			assert.Equal(t, tt.want, record.Slugify(tt.title))
		})
	}
}
