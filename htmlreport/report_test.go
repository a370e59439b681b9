package htmlreport

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"stormsim/config"
	"stormsim/results"
	"stormsim/runner"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// runResult runs a config as stormsim run does and returns result.json.
func runResult(t *testing.T, path string) []byte {
	t.Helper()
	doc0, err := config.LoadDocument(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	file, err := doc0.ScenarioFile()
	if err != nil {
		t.Fatal(err)
	}
	doc := results.New(file.Scenario, file.Hash(), file.Echo())
	if err := runner.Build(doc, file.Scenario, file.Scenario.Policies, runner.Options{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	data, err := doc.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// structure lists what a page shows, without its charts' drawing: the
// golden of a page.
func structure(p *Page) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kind %s\nname %s\nverdict %s\nheadline %s\n", p.Kind, p.Name, p.Verdict, p.Headline)
	for _, f := range p.Facts {
		if f.Name != "written by" {
			fmt.Fprintf(&b, "fact %s: %s\n", f.Name, f.Value)
		}
	}
	for _, s := range p.Sections {
		fmt.Fprintf(&b, "\nsection #%s %q\n", s.ID, s.Title)
		for _, tx := range s.Text {
			fmt.Fprintf(&b, "  text %s\n", tx)
		}
		for _, t := range s.Tables {
			fmt.Fprintf(&b, "  table #%s %q\n    %s\n", t.ID, t.Caption, strings.Join(t.Header, " | "))
			for _, row := range t.Rows {
				var cells []string
				for _, c := range row {
					text := c.Text
					if c.Class != "" {
						text += " {" + c.Class + "}"
					}
					cells = append(cells, text)
				}
				fmt.Fprintf(&b, "    %s\n", strings.Join(cells, " | "))
			}
		}
		for _, c := range s.Charts {
			fmt.Fprintf(&b, "  chart #%s %q\n", c.ID, c.Title)
		}
	}
	fmt.Fprintf(&b, "\nconfig %q hash %s\n%s", p.Config.Title, p.Config.Hash, p.Config.Text)
	for _, d := range p.Data {
		fmt.Fprintf(&b, "data #%s %s\n", d.ID, d.File)
	}
	return b.String()
}

// TestRunPageStructure compares the structure of a run's page from a
// fixed seed (section ids, tables, checks with PASS and FAIL, chart
// titles, the config) with testdata/run.structure.golden; refresh with
// go test ./htmlreport -update and review the diff. Its checks are those
// stormsim check evaluates on the same config: one passes, two fail.
func TestRunPageStructure(t *testing.T) {
	data := runResult(t, "testdata/checked.yaml")
	p, err := RunPage(data)
	if err != nil {
		t.Fatal(err)
	}
	got := structure(p)
	golden := filepath.Join("testdata", "run.structure.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the page's structure differs from %s (rerun with -update if intended):\n%s", golden, got)
	}
	for _, want := range []string{"verdict FAIL", "results[full].convergence_ms < 3s | 1.46 s {num} | PASS {pass}",
		"results[exponential].attempts <= 150 | 219 {num} | FAIL {fail}", "section #charts", "chart #chart-attempts"} {
		if !strings.Contains(got, want) {
			t.Errorf("structure lacks %q", want)
		}
	}
	html, err := p.HTML()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := RunPage(data)
	html2, _ := again.HTML()
	if !bytes.Equal(html, html2) {
		t.Error("the same result gives two pages")
	}
}

// TestPagesLoadNothing: a page names no address to load: no src= or
// href= other than its own anchors, no url(), no @import, and its
// Content-Security-Policy allows no source.
func TestPagesLoadNothing(t *testing.T) {
	p, err := RunPage(runResult(t, "testdata/checked.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	html, err := p.HTML()
	if err != nil {
		t.Fatal(err)
	}
	text := string(html)
	for _, m := range regexp.MustCompile(`(?i)(src|href|xlink:href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(text, -1) {
		if !strings.HasPrefix(m[2], "#") && !strings.HasPrefix(m[2], "data:") {
			t.Errorf("the page loads %s=%q", m[1], m[2])
		}
	}
	for _, bad := range []string{"url(", "@import", "http://", "https://"} {
		if i := strings.Index(text, bad); i >= 0 && !strings.Contains(text[max(0, i-40):i], "xmlns") {
			t.Errorf("the page holds %q: %s", bad, text[max(0, i-60):min(len(text), i+60)])
		}
	}
	if !strings.Contains(text, `content="default-src 'none';`) {
		t.Error("no Content-Security-Policy that allows no source")
	}
}

// failAt fails the n-th write (1-based) after writing part of it, as a
// full disk does.
type failAt struct {
	w      io.Writer
	n, now int
}

var errDisk = errors.New("no space left on device")

func (f *failAt) Write(p []byte) (int, error) {
	f.now++
	if f.now == f.n {
		k, _ := f.w.Write(p[:len(p)/2])
		return k, errDisk
	}
	return f.w.Write(p)
}

// TestAWriteFailingAtAnyPointLeavesTheEarlierReportWhole: Write, its
// file failing at the n-th write, for every n, leaves the earlier
// report.html whole (or none, when there was none) and no temporary
// file; past the last write the new report is written whole.
func TestAWriteFailingAtAnyPointLeavesTheEarlierReportWhole(t *testing.T) {
	data, err := os.ReadFile("../testdata/golden/seed-backoff-model.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := RunPage(data)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := p.HTML()
	counter := failAt{w: io.Discard}
	if _, err := (buffered{p: p}).WriteTo(&counter); err != nil {
		t.Fatal(err)
	}
	writes := counter.now
	if writes < 5 {
		t.Fatalf("a report in %d writes: the test needs several", writes)
	}
	for _, earlier := range [][]byte{nil, []byte("<!DOCTYPE html><p>the earlier report</p>\n")} {
		dir := t.TempDir()
		path := filepath.Join(dir, File)
		if earlier != nil {
			os.WriteFile(path, earlier, 0o644)
		}
		for n := 1; n <= writes+1; n++ {
			_, err := write(dir, p, func(w io.Writer) io.Writer { return &failAt{w: w, n: n} })
			got, readErr := os.ReadFile(path)
			entries, _ := os.ReadDir(dir)
			switch {
			case n <= writes && !errors.Is(err, errDisk):
				t.Fatalf("write %d of %d failing: err %v", n, writes, err)
			case n <= writes && earlier == nil && readErr == nil:
				t.Fatalf("write %d of %d failing left a report of %d bytes", n, writes, len(got))
			case n <= writes && earlier != nil && !bytes.Equal(got, earlier):
				t.Fatalf("write %d of %d failing changed the earlier report", n, writes)
			case n > writes && (err != nil || !bytes.Equal(got, want)):
				t.Fatalf("no write failing: err %v, %d bytes of %d", err, len(got), len(want))
			case len(entries) > 1:
				t.Fatalf("write %d failing left %d files in the directory", n, len(entries))
			}
		}
	}
	t.Logf("%d writes, each failing in turn", writes)
}

// TestFromDirErrors: a directory that holds no stormsim document, or is
// not a directory, is refused in one line naming it.
func TestFromDirErrors(t *testing.T) {
	empty := t.TempDir()
	if _, err := FromDir(empty); err == nil || !strings.Contains(err.Error(), "holds none of result.json, sweep.json, calibration.json") {
		t.Errorf("empty dir: %v", err)
	}
	file := filepath.Join(empty, "x")
	os.WriteFile(file, nil, 0o644)
	if _, err := FromDir(file); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file: %v", err)
	}
	os.WriteFile(filepath.Join(empty, RunFile), []byte(`{"schema_version": 99}`), 0o644)
	if _, err := FromDir(empty); err == nil || !strings.Contains(err.Error(), "schema_version 99") {
		t.Errorf("a foreign result: %v", err)
	}
}
