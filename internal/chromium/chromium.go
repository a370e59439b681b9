// Package chromium drives a headless Chromium over the DevTools protocol
// on a pipe (--remote-debugging-pipe: commands in on its fd 3, answers
// and events out on fd 4, each message JSON ended by a NUL byte), for
// tests that load a page as a person's browser would. It is a few
// hundred lines because it needs only a few commands: open a page, load
// a URL, evaluate a script, take a screenshot, and keep the page's
// events (console messages, exceptions, log entries, requests).
package chromium

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Names are the executables Find looks for, Debian's first.
var Names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Find is the path of a Chromium on PATH, "" when there is none.
func Find() string {
	for _, n := range Names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// Flags start Chromium headless on a machine with a closed network and
// as root: without the background-networking ones it tries to reach
// Google's hosts at every start and fills its log with refusals.
var Flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
	"--remote-debugging-pipe",
}

// Browser is a running Chromium.
type Browser struct {
	cmd     *exec.Cmd
	profile string
	in      *os.File // its fd 3
	out     *os.File // its fd 4

	mu      sync.Mutex
	next    int
	pending map[int]chan message
	events  map[string][]Event // by session id
	wake    chan struct{}      // closed and replaced when an event arrives
	err     error              // why reading stopped
	done    chan struct{}
}

// Event is a protocol event a page received.
type Event struct {
	Method string
	Params json.RawMessage
}

type message struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    any             `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Start runs the Chromium at path headless with a fresh profile, the
// window width by height CSS pixels.
func Start(path string, width, height int) (*Browser, error) {
	profile, err := os.MkdirTemp("", "stormsim-chromium-")
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	args := append(append([]string{}, Flags...), "--user-data-dir="+profile, fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	cmd := exec.Command(path, args...)
	cmd.ExtraFiles = []*os.File{inR, outW} // fds 3 and 4
	if err := cmd.Start(); err != nil {
		os.RemoveAll(profile)
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	inR.Close()
	outW.Close()
	b := &Browser{cmd: cmd, profile: profile, in: inW, out: outR, pending: map[int]chan message{},
		events: map[string][]Event{}, wake: make(chan struct{}), done: make(chan struct{})}
	go b.read()
	return b, nil
}

// Close ends the browser and removes its profile.
func (b *Browser) Close() error {
	b.in.Close()
	exited := make(chan error, 1)
	go func() { exited <- b.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		b.cmd.Process.Kill()
		<-exited
	}
	b.out.Close()
	return os.RemoveAll(b.profile)
}

// read delivers answers to their callers and keeps events, until the
// pipe closes.
func (b *Browser) read() {
	r := bufio.NewReaderSize(b.out, 1<<20)
	for {
		raw, err := r.ReadBytes(0)
		if err != nil {
			b.stop(fmt.Errorf("chromium closed its pipe: %w", err))
			return
		}
		var m struct {
			message
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			b.stop(fmt.Errorf("chromium sent a message that is not JSON: %w", err))
			return
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.pending[m.ID]; ok {
				delete(b.pending, m.ID)
				ch <- m.message
			}
		} else if m.Method != "" {
			b.events[m.SessionID] = append(b.events[m.SessionID], Event{Method: m.Method, Params: m.Params})
			close(b.wake)
			b.wake = make(chan struct{})
		}
		b.mu.Unlock()
	}
}

func (b *Browser) stop(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
		close(b.done)
	}
}

// call sends method with params in session ("" for the browser) and
// decodes its result into result (nil to drop it).
func (b *Browser) call(ctx context.Context, session, method string, params, result any) error {
	b.mu.Lock()
	if b.err != nil {
		b.mu.Unlock()
		return b.err
	}
	b.next++
	id := b.next
	ch := make(chan message, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	data, err := json.Marshal(message{ID: id, Method: method, Params: params, SessionID: session})
	if err != nil {
		return err
	}
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("%s: %w", method, b.err)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Page is one tab, attached.
type Page struct {
	b       *Browser
	session string
}

// NewPage opens a blank tab with its page, runtime, log and network
// events on.
func (b *Browser) NewPage(ctx context.Context) (*Page, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return nil, err
	}
	p := &Page{b: b, session: attached.SessionID}
	for _, domain := range []string{"Page", "Runtime", "Log", "Network"} {
		if err := p.Call(ctx, domain+".enable", map[string]any{}, nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Call sends a command to the page.
func (p *Page) Call(ctx context.Context, method string, params, result any) error {
	return p.b.call(ctx, p.session, method, params, result)
}

// Events are the events the page received so far; Reset forgets them.
func (p *Page) Events() []Event {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return append([]Event(nil), p.b.events[p.session]...)
}

// Reset forgets the page's events.
func (p *Page) Reset() {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	delete(p.b.events, p.session)
}

// Load navigates to url and waits for its load event.
func (p *Page) Load(ctx context.Context, url string) error {
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.Call(ctx, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return fmt.Errorf("navigate %s: %s", url, nav.ErrorText)
	}
	for {
		p.b.mu.Lock()
		for _, e := range p.b.events[p.session] {
			if e.Method == "Page.loadEventFired" {
				p.b.mu.Unlock()
				return nil
			}
		}
		wake, done := p.b.wake, p.b.done
		p.b.mu.Unlock()
		select {
		case <-wake:
		case <-done:
			return p.b.err
		case <-ctx.Done():
			return fmt.Errorf("load %s: %w", url, ctx.Err())
		}
	}
}

// Evaluate runs expression in the page, awaiting a promise it returns,
// and decodes its value into result.
func (p *Page) Evaluate(ctx context.Context, expression string, result any) error {
	var out struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := p.Call(ctx, "Runtime.evaluate", map[string]any{"expression": expression, "awaitPromise": true, "returnByValue": true}, &out)
	if err != nil {
		return err
	}
	if e := out.ExceptionDetails; e != nil {
		return fmt.Errorf("evaluate: %s %s", e.Text, e.Exception.Description)
	}
	if result == nil {
		return nil
	}
	if len(out.Result.Value) == 0 {
		return errors.New("evaluate: no value")
	}
	return json.Unmarshal(out.Result.Value, result)
}

// Screenshot is a PNG of the page's viewport.
func (p *Page) Screenshot(ctx context.Context) ([]byte, error) {
	var out struct {
		Data []byte `json:"data"` // base64 in JSON: decoded by encoding/json
	}
	err := p.Call(ctx, "Page.captureScreenshot", map[string]any{"format": "png"}, &out)
	return out.Data, err
}
