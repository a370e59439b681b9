package chromium

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// need starts a Chromium for a test (see Need).
func need(t *testing.T) *Browser {
	t.Helper()
	b, err := Start(Need(t), 800, 600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestTheDriverSeesWhatAPageDoes: the events a browser test judges by
// reach it: a console error, an uncaught exception, a request to the
// network; and a script's value and a screenshot come back.
func TestTheDriverSeesWhatAPageDoes(t *testing.T) {
	b := need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	page, err := b.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	html := `<!DOCTYPE html><html><body style="background:#036"><h1 style="color:#fc0">hello</h1>
<img src="http://127.0.0.1:9/nothing.png">
<script>console.error("something broke"); window.answer = 6 * 7; setTimeout(() => { throw new Error("late") }, 0);</script></body></html>`
	path := filepath.Join(dir, "page.html")
	if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := page.Load(ctx, "file://"+path); err != nil {
		t.Fatal(err)
	}
	var answer int
	if err := page.Evaluate(ctx, "new Promise(r => setTimeout(() => r(window.answer), 50))", &answer); err != nil || answer != 42 {
		t.Fatalf("evaluate: %d, %v", answer, err)
	}
	seen := map[string]bool{}
	for _, e := range page.Events() {
		switch e.Method {
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
			}
			json.Unmarshal(e.Params, &p)
			seen["console "+p.Type] = true
		case "Runtime.exceptionThrown":
			seen["exception"] = true
		case "Network.requestWillBeSent":
			var p struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
			}
			json.Unmarshal(e.Params, &p)
			if strings.HasPrefix(p.Request.URL, "http://127.0.0.1:9/") {
				seen["request"] = true
			}
		}
	}
	for _, want := range []string{"console error", "exception", "request"} {
		if !seen[want] {
			t.Errorf("no %s among the page's events (%v)", want, seen)
		}
	}
	shot, err := page.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil || img.Bounds().Dx() != 800 {
		t.Fatalf("screenshot: %v, %v", img.Bounds(), err)
	}
	r, g, bl, _ := img.At(400, 500).RGBA()
	if r>>8 != 0 || g>>8 != 0x33 || bl>>8 != 0x66 {
		t.Errorf("screenshot pixel %x %x %x, want the page's background 0 33 66", r>>8, g>>8, bl>>8)
	}
}
