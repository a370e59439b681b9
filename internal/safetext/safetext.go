// Package safetext makes text from files and flags safe to print: on one
// line for error messages, and with no control characters for a terminal,
// where an ESC in a scenario name would otherwise recolour or move the
// cursor.
package safetext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// OneLine escapes line breaks as \r and \n, so a message never spans lines
// whatever the file or flag it quotes contained.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// Terminal escapes every rune a terminal would not print as itself
// (control characters such as ESC, line breaks, tabs, bidirectional
// overrides, invalid UTF-8) the way Go writes them in a quoted string,
// \x1b, \n or \u202e, and leaves the rest as it is.
func Terminal(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, notPrintable) < 0 {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case notPrintable(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// notPrintable is a rune a terminal does not show as itself: anything
// strconv.IsPrint rejects but the ordinary space.
func notPrintable(r rune) bool { return r != ' ' && !strconv.IsPrint(r) }
