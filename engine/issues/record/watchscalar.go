package record

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// This file is how yaml.v3 (v3.0.1) writes a string in a block mapping
// or sequence, for the strings EncodeWatch writes itself. Which style it
// asks for is encode.go's stringv: plain when the string read back plain
// would be a string (canUsePlain), else double-quoted; a string with a
// line break is a literal block, left to yaml.v3 here. The emitter then
// takes a plain scalar it cannot write plain as single-quoted, and one
// it cannot single-quote as double-quoted (emitterc.go,
// yaml_emitter_analyze_scalar and yaml_emitter_select_scalar_style).
// Limited to strings of printable characters without a tab or a line
// break, every string may be single-quoted, and one double-quoted needs
// no escape; the rest is left to yaml.v3.

// maxSimpleKey is the longest key yaml.v3 writes as "key: value"; a
// longer one is written "? key" (yaml_emitter_check_simple_key).
const maxSimpleKey = 128

// str writes s, a key when key is set, as yaml.v3 does, or sets e.slow.
func (e *watchEncoder) str(s string, key bool) {
	plainOK, ok := analyzeScalar(s)
	if !ok || key && len(s) > maxSimpleKey {
		e.slow = true
		return
	}
	switch {
	case !canUsePlain(s):
		// A null, bool, number or timestamp has no '"' or '\\' to escape.
		e.b = append(e.b, '"')
		e.b = append(e.b, s...)
		e.b = append(e.b, '"')
	case plainOK:
		e.b = append(e.b, s...)
	default:
		e.b = append(e.b, '\'')
		for i := 0; i < len(s); i++ {
			if s[i] == '\'' {
				e.b = append(e.b, '\'')
			}
			e.b = append(e.b, s[i])
		}
		e.b = append(e.b, '\'')
	}
}

// analyzeScalar is yaml_emitter_analyze_scalar for a block context: ok
// when s is valid UTF-8 of the characters the emitter counts printable,
// with neither a tab nor a line break, and then whether it may be written
// plain (no indicator where one would be read, no space at either end).
func analyzeScalar(s string) (plainOK, ok bool) {
	if s == "" {
		return true, true
	}
	indicator := strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...")
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		indicator = true
	case '?', '-': // ':' is below
		indicator = indicator || len(s) == 1 || s[1] == ' '
	}
	preceded := true // by whitespace
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			r, w := utf8.DecodeRuneInString(s[i:])
			if !printable(r) || r == utf8.RuneError && w == 1 {
				return false, false
			}
			i += w - 1
		case c < 0x20 || c == 0x7f:
			return false, false
		case c == ':':
			indicator = indicator || i+1 == len(s) || s[i+1] == ' '
		case c == '#':
			indicator = indicator || preceded
		}
		preceded = s[i] == ' '
	}
	return !indicator && s[0] != ' ' && s[len(s)-1] != ' ', true
}

// printable is a character beyond ASCII that yaml.v3's emitter counts
// printable (yamlprivateh.go, is_printable) and not a line break
// (is_break): not one of four bytes (an emoji is escaped), not a BOM.
func printable(r rune) bool {
	return (r >= 0xA0 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD) &&
		r != 0xFEFF && r != 0x2028 && r != 0x2029
}

// canUsePlain is stringv's test: s resolves to !!str (resolve.go,
// resolve, with no tag) and is neither a YAML 1.1 base-60 float nor bool.
// The first byte is resolve's hint of what s may be; most strings are
// known to be strings by it alone.
func canUsePlain(s string) bool {
	if s == "" {
		return false // null
	}
	switch c := s[0]; {
	case c == '+' || c == '-' || '0' <= c && c <= '9':
		return !resolvesNumber(s) && !isBase60Float(s)
	case c == '.':
		if _, ok := resolveWords[s]; ok {
			return false
		}
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		_, ok := resolveWords[s]
		return !ok && !isOldBool(s)
	}
	return true
}

// resolveWords are resolve's strings that are not strings ("<<", also
// one, is never looked up: '<' is no hint).
var resolveWords = map[string]struct{}{
	"true": {}, "True": {}, "TRUE": {}, "false": {}, "False": {}, "FALSE": {},
	"~": {}, "null": {}, "Null": {}, "NULL": {},
	".nan": {}, ".NaN": {}, ".NAN": {}, ".inf": {}, ".Inf": {}, ".INF": {},
	"+.inf": {}, "+.Inf": {}, "+.INF": {}, "-.inf": {}, "-.Inf": {}, "-.INF": {},
}

// isOldBool is encode.go's isOldBool.
func isOldBool(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return true
	}
	return false
}

// base60float is encode.go's.
var base60float = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

// isBase60Float is encode.go's isBase60Float, s starting with a sign or
// a digit.
func isBase60Float(s string) bool {
	return strings.IndexByte(s, ':') >= 0 && base60float.MatchString(s)
}

// yamlStyleFloat is resolve.go's.
var yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// resolvesNumber is resolve's branch for a string starting with a sign
// or a digit: whether it reads as a timestamp, an int or a float. Two
// shortcuts spare the parsers strings they cannot take (a head's SHA):
// strconv's base 0 reads a number starting with 1-9 in decimal, and
// yamlStyleFloat takes no letter but 'e'.
func resolvesNumber(s string) bool {
	if _, ok := resolveWords[s]; ok {
		return true
	}
	if isTimestamp(s) {
		return true
	}
	plain := strings.ReplaceAll(s, "_", "")
	if mayBeInt(plain) {
		if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return true
		}
		if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return true
		}
	}
	if strings.Trim(plain, "0123456789.eE+-") == "" && yamlStyleFloat.MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	for _, p := range []struct {
		prefix string
		base   int
	}{{"0b", 2}, {"0o", 8}} {
		if digits, ok := strings.CutPrefix(plain, p.prefix); ok {
			if _, err := strconv.ParseInt(digits, p.base, 64); err == nil {
				return true
			}
			if _, err := strconv.ParseUint(digits, p.base, 64); err == nil {
				return true
			}
		} else if digits, ok := strings.CutPrefix(plain, "-"+p.prefix); ok {
			if _, err := strconv.ParseInt("-"+digits, p.base, 64); err == nil {
				return true
			}
		}
	}
	return false
}

// mayBeInt is false when strconv.ParseInt(s, 0, 64) and ParseUint must
// fail: after a sign, base 0 reads a prefix ("0x", "0o", "0b", "0") and
// digits of that base, and a first digit 1-9 means base 10.
func mayBeInt(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" || s[0] == '0' {
		return strings.Trim(s, "0123456789abcdefABCDEFxXoObB") == ""
	}
	return strings.Trim(s, "0123456789") == ""
}

// timestampFormats are resolve.go's allowedTimestampFormats.
var timestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isTimestamp is resolve.go's parseTimestamp: YYYY- and a time.Parse
// of one of its formats.
func isTimestamp(s string) bool {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, f := range timestampFormats {
		if _, err := time.Parse(f, s); err == nil {
			return true
		}
	}
	return false
}

// keyLess is sorter.go's keyList.Less for two strings: letters by code
// point, after other characters (before them after a digit), and runs
// of digits by their value.
func keyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	digits := false
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			digits = unicode.IsDigit(ar[i])
			continue
		}
		al, bl := unicode.IsLetter(ar[i]), unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			if digits {
				return al
			}
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}

// maxKeyDigits is the longest run of digits keyLess reads without
// overflowing an int64, with the 1 it may put before a run from a 0.
const maxKeyDigits = 18

// orderedKey is whether keyLess orders k among other such keys: its
// runs of digits are ASCII and short enough to be read as int64s, and it
// has no U+FFFD (what a byte that is not UTF-8 reads as, so "\xff" and
// "\xfe" tie). Keys outside this make ties and cycles ("99919a9a191" <
// "9909909999910999999" < "1-999aa99999" < "99919a9a191"), which
// yaml.v3 sorts as the map's iteration order falls.
func orderedKey(k string) bool {
	run := 0
	for _, r := range k {
		switch {
		case r == utf8.RuneError:
			return false
		case '0' <= r && r <= '9':
			run++
			if run > maxKeyDigits {
				return false
			}
		case unicode.IsDigit(r):
			return false
		default:
			run = 0
		}
	}
	return true
}
