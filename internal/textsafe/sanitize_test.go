package textsafe_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/internal/textsafe"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain text", "CI failed: test-unit (3 tests)", "CI failed: test-unit (3 tests)"},
		{"newlines and tabs kept", "a\n\tb\n", "a\n\tb\n"},
		{"windows line ends", "a\r\nb\r\n", "a\nb\n"},
		{"lone carriage return", "10%\r20%", "10%\n20%"},
		{"unicode kept", "café → 完成 ✓", "café → 完成 ✓"},
		{"SGR colours", "\x1b[1;31mred\x1b[0m", "red"},
		{"CSI with private parameters", "\x1b[?2004hx\x1b[?25l", "x"},
		{"CSI with intermediates", "a\x1b[1 qb", "ab"},
		{"C1 CSI", "a\u009b2Jb", "ab"},
		{"OSC ended by BEL", "\x1b]0;title\x07text", "text"},
		{"OSC ended by ST", "\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"OSC 52 clipboard write", "\x1b]52;c;cm0gLXJmIH4=\x07ok", "ok"},
		{"C1 OSC ended by C1 ST", "\u009d0;t\u009cok", "ok"},
		{"DCS tmux passthrough", "\x1bPtmux;\x1b\x1b]0;x\x07\x1b\\ok", "ok"},
		{"APC, PM and SOS", "\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\ok", "ok"},
		{"control string cut by a newline", "\x1b]0;unterminated\nrest", "\nrest"},
		{"new sequence inside a control string", "\x1b]0;t\x1b[31mred", "red"},
		{"two-character escapes", "\x1b7a\x1b8\x1bcb\x1b(Bc", "abc"},
		{"escape at the end", "text\x1b", "text"},
		{"escape before non-ASCII", "\x1bé", "é"},
		{"C0 controls", "a\x00b\x07c\x08d\x7fe", "abcde"},
		{"C1 controls", "a\u0085b\u008dc", "abc"},
		{"bidi overrides and isolates", "a\u202eb\u2066c\u2069d\u202ae", "abcde"},
		{"invalid UTF-8", "a\xffb", "a\ufffdb"},
		{"text that looks like tmux or a shell", "-t x; kill-server $(id) `id` #{pane_id}", "-t x; kill-server $(id) `id` #{pane_id}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, textsafe.Sanitize(tt.in))
		})
	}
}
