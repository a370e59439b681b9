package client

import (
	"errors"
	"fmt"
	"os"
	"stormsim/internal/atomicfile"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Device is one installed app instance as the gateway knows it: the
// credentials it presents and the claim order it asserts.
type Device struct {
	ID    string // device id, e.g. "u-007-d1"
	Token string // secret paired with ID in "Bearer ID:TOKEN"
	// InstallEpoch grows when the app is reinstalled; the gateway compares
	// it before Attempt, so a reinstall whose counter restarted still wins.
	InstallEpoch int64
	// Attempts is the persisted handshake counter. The client calls Next
	// before every handshake and sends the result; nil means a fresh
	// in-memory counter starting at 0.
	Attempts AttemptCounter
}

// AttemptCounter is a device's handshake counter. Next must make the new
// value durable before returning it: a counter that goes backwards after a
// restart earns 409s until it passes the gateway's recorded floor.
type AttemptCounter interface {
	// Next increments the counter, persists it and returns the new value.
	Next() (int64, error)
}

// MemoryCounter is an AttemptCounter that lives as long as the process: the
// storm driver's choice, where one process runs every round. Its zero value
// starts at 0, so the first handshake sends attempt 1.
type MemoryCounter struct{ n atomic.Int64 }

// NewMemoryCounter returns a counter whose next handshake sends start+1.
func NewMemoryCounter(start int64) *MemoryCounter {
	c := &MemoryCounter{}
	c.n.Store(start)
	return c
}

// Next implements AttemptCounter.
func (c *MemoryCounter) Next() (int64, error) { return c.n.Add(1), nil }

// Value returns the last value handed out (the attempt of the latest handshake).
func (c *MemoryCounter) Value() int64 { return c.n.Load() }

// FileCounter is an AttemptCounter kept in a small text file (the decimal
// value and a newline), replaced atomically on every increment so that a
// crash leaves either the old or the new value, never a torn one.
type FileCounter struct {
	path string
	mu   sync.Mutex
	n    int64
}

// OpenFileCounter reads the counter at path; a missing file means 0.
func OpenFileCounter(path string) (*FileCounter, error) {
	c := &FileCounter{path: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%s: attempt counter: not a non-negative integer (got %q)", path, strings.TrimSpace(string(b)))
	}
	c.n = n
	return c, nil
}

// Next implements AttemptCounter: the new value replaces the file
// atomically and durably (internal/atomicfile) before it is handed out.
func (c *FileCounter) Next() (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n + 1
	if err := atomicfile.Write(c.path, []byte(strconv.FormatInt(n, 10)+"\n")); err != nil {
		return 0, err
	}
	c.n = n
	return n, nil
}

// Value returns the last value handed out.
func (c *FileCounter) Value() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
