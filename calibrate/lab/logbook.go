package lab

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logLine is one JSON line of a gateway's slog output.
type logLine struct {
	Time   time.Time      // the line's slog.TimeKey
	Msg    string         // its slog.MessageKey
	Fields map[string]any // everything, time and msg included
}

// num is the numeric field key; a line without it is an error, not 0.
func (l logLine) num(key string) (float64, error) {
	v, ok := l.Fields[key].(float64)
	if !ok {
		return 0, l.missing(key, "number")
	}
	return v, nil
}

// str is the string field key; a line without it is an error.
func (l logLine) str(key string) (string, error) {
	v, ok := l.Fields[key].(string)
	if !ok {
		return "", l.missing(key, "string")
	}
	return v, nil
}

func (l logLine) missing(key, kind string) error {
	data, _ := json.Marshal(l.Fields)
	return fmt.Errorf("gateway log line %q has no %s %q: %s", l.Msg, kind, key, data)
}

// logBook collects a process's log lines as they arrive.
type logBook struct {
	mu      sync.Mutex
	lines   []logLine
	other   []string // lines that are not JSON
	changed chan struct{}
}

func newLogBook() *logBook { return &logBook{changed: make(chan struct{})} }

func (b *logBook) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		b.add(sc.Text())
	}
	io.Copy(io.Discard, r) // a line over the limit: keep the pipe drained
}

func (b *logBook) add(text string) {
	var fields map[string]any
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := json.Unmarshal([]byte(text), &fields); err != nil {
		b.other = append(b.other, text)
	} else {
		l := logLine{Fields: fields}
		l.Msg, _ = fields[slog.MessageKey].(string)
		if ts, ok := fields[slog.TimeKey].(string); ok {
			l.Time, _ = time.Parse(time.RFC3339Nano, ts)
		}
		b.lines = append(b.lines, l)
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

// find returns the lines with message msg so far and a channel closed at
// the next line.
func (b *logBook) find(msg string) ([]logLine, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []logLine
	for _, l := range b.lines {
		if l.Msg == msg {
			out = append(out, l)
		}
	}
	return out, b.changed
}

// all returns every JSON line so far.
func (b *logBook) all() []logLine {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]logLine(nil), b.lines...)
}

// last describes the last line, for error messages.
func (b *logBook) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := len(b.other); n > 0 {
		return b.other[n-1]
	}
	if n := len(b.lines); n > 0 {
		data, _ := json.Marshal(b.lines[n-1].Fields)
		return string(data)
	}
	return "no output"
}
