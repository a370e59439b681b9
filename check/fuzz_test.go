package check

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"stormsim/plots"
	"stormsim/results"
)

// FuzzParseCheck feeds arbitrary threshold expressions to Parse: never a
// panic, errors on one line, and an accepted check written back in plain
// form (METRIC OP NUMBER, or the bound as written on a time metric, which
// takes no bare number) parses to the same check, whose report line is one
// line.
func FuzzParseCheck(f *testing.F) {
	for _, seed := range []string{
		"results[full].convergence_ms < 6000", "results[full].convergence_ms < 6s", "database.peak_rows_per_s < 25k/s", "attempts > 1.5M", "p95(results[a].reclaim.reclaim_ms) < 250us", "connect_ms.p99 > 1m30s",
		"results[full].attempts < 5%", "results[full].attempts < 2s", "results[a<b].x < 1", "mean(attempts)>=1e308",
		"results[].x == 0", "p99((x)) != -0", "x < 1e-400", "results[full].attempts < 9223372036854775808ns",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Parse(text)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") && !strings.ContainsAny(text, "\r\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		bound := strconv.FormatFloat(c.Bound, 'g', -1, 64)
		if results.TimeUnit(c.Metric.Field) != "" {
			bound = c.Written
		}
		plain := c.Metric.String() + " " + c.Op + " " + bound
		again, err := Parse(plain)
		if err != nil || again.Metric != c.Metric || again.Op != c.Op || again.Bound != c.Bound {
			t.Fatalf("%q parsed as %+v; its plain form %q as %+v, %v", text, c, plain, again, err)
		}
		for _, v := range []float64{c.Bound, 0, -1.5, 1e300, math.Nextafter(c.Bound, math.Inf(1))} {
			if line := (Outcome{Check: c, Observed: v, HasData: true}).String(); strings.ContainsAny(line, "\r\n") && !strings.ContainsAny(text, "\r\n") {
				t.Fatalf("report line spans lines: %q", line)
			}
		}
	})
}

// FuzzDocument feeds arbitrary result documents to what plot, check
// --baseline and merge do with them: never a panic, errors on one line; an
// accepted document compares equal to itself, charts or says why not, and
// writes back the same JSON once re-read.
func FuzzDocument(f *testing.F) {
	goldens, _ := filepath.Glob("../testdata/golden/*.json")
	for _, g := range goldens {
		data, err := os.ReadFile(g)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
		f.Add(bytes.Replace(data, []byte(`"ci95": [`), []byte(`"ci95": [1e999, `), 1))
	}
	for _, seed := range []string{`{"a":1}`, `{"schema_version":1}`, `{"schema_version":1,"results":[{"window_ms":-1,"series":{"attempts":[-5]}}]}`,
		`{"schema_version":1,"summary":[{"policy":"p","metrics":{"x":{"ci95":[]}}}]}`, `[]`, `null`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseDocument("fuzz.json", data)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if cmp := Compare(doc, doc, Tolerance{}); cmp.Drifted() || len(cmp.New)+len(cmp.NewSeries) != 0 {
			t.Fatalf("a document drifts from itself: %v %v", cmp.Drifts, cmp.SeriesDrifts)
		}
		for _, m := range DocumentMetrics(doc) {
			if ref, err := results.ParseMetricRef(m.Name); err == nil {
				Lookup(doc, ref)
			}
		}
		run := plots.FromResults(doc.Name, doc.Seed, doc.Results, 0)
		if err := run.Validate(); err != nil && strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("chart error spans lines: %q", err)
		}
		first, err := doc.JSON()
		if err != nil {
			return // a value JSON cannot hold; writing it fails cleanly
		}
		again, err := ParseDocument("again.json", first)
		if err != nil {
			t.Fatalf("a document it wrote does not read back: %v", err)
		}
		second, err := again.JSON()
		if err != nil || !bytes.Equal(first, second) {
			t.Fatalf("written twice, the document changed (%v)", err)
		}
		DropSeries(again)
	})
}
