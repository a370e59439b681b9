package config

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"stormsim/internal/safetext"
)

// Error is a config problem a user can act on. It prints as exactly one
// line, "FILE:LINE: key.path: what is wrong (got X)", or with the
// --set override in place of FILE:LINE when the value came from one.
type Error struct {
	Where   string // "FILE:LINE", "FILE" or "--set path=value"
	Path    string // key path such as "policies[1].cap"; empty for syntax errors
	Problem string // what is wrong
	Got     string // the offending value as written; empty to omit "(got ...)"
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Where)
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	if e.Got != "" {
		b.WriteString(" (got ")
		b.WriteString(e.Got)
		b.WriteString(")")
	}
	return safetext.OneLine(b.String())
}

// maxGotLen bounds how much of an offending value an error quotes.
const maxGotLen = 60

// describe renders a node as the user wrote it, for the "(got X)" part:
// strings quoted, other scalars verbatim, collections by kind.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!str":
			return strconv.Quote(truncate(n.Value))
		}
		return truncate(n.Value)
	}
	return "nothing"
}

func truncate(s string) string {
	if len(s) <= maxGotLen {
		return s
	}
	return s[:maxGotLen] + "..."
}

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// parserProblems are the messages of yaml.v3's parser (as opposed to its
// scanner). yaml.v3 reports their line zero-based, or not at all on the
// first line, so syntaxError adds one.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// syntaxError turns a yaml.v3 parse error ("yaml: line 3: ...") into an
// Error at that line of file. data is the file's text, to tell a tab from
// other characters the parser cannot start a token with.
func syntaxError(file string, data []byte, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ": "); ok {
			if n, convErr := strconv.Atoi(num); convErr == nil {
				line, msg = n, tail
			}
		}
	}
	if parserProblems[msg] {
		line++
	}
	// The parser may blame the line before the tab (the one whose block
	// the tab's line would indent): the tab's own line is the one to fix.
	tab := false
	for l := line; tabProblems[msg] && l <= line+2; l++ {
		if bytes.Contains(lineText(data, l), []byte("\t")) {
			line, tab = l, true
			break
		}
	}
	where := file
	if line > 0 {
		where = fmt.Sprintf("%s:%d", file, line)
	}
	problem := "invalid YAML: " + msg
	if tab {
		problem += ": a tab; YAML indents with spaces only"
	}
	return &Error{Where: where, Problem: problem}
}

// tabProblems are the parser messages a tab in the indentation (or
// before a value) causes; they do not say so.
var tabProblems = map[string]bool{
	"found character that cannot start any token":                  true,
	"found a tab character that violates indentation":              true,
	"found a tab character where an indentation space is expected": true,
}

// lineText is line n (1-based) of data, or nil.
func lineText(data []byte, n int) []byte {
	for i := 1; len(data) > 0; i++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		if i == n {
			return line
		}
		data = rest
	}
	return nil
}
