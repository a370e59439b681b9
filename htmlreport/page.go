package htmlreport

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"

	"stormsim/internal/atomicfile"
	"stormsim/plots"
)

// File is the report's name in an output directory.
const File = "report.html"

// Page is one report: a headline, sections of tables and charts, the
// config it ran, and the documents it shows, embedded.
type Page struct {
	Kind     string // "run", "sweep", "calibration", "solve"
	Name     string // the config's name
	Headline string // the outcome, in the words a planner acts on
	Verdict  string // "PASS" or "FAIL" when checks decide one; "" otherwise
	Facts    []Fact // seed, version, config hash, replications, the machine's load
	Sections []Section
	Config   Config
	Data     []Data // the documents shown, embedded and downloadable
}

// Fact is one line of the page's header: "seed", "1".
type Fact struct{ Name, Value string }

// Section is one part of a page, with a stable id (the golden of a page's
// structure lists them): "summary", "checks", "charts", ...
type Section struct {
	ID     string
	Title  string
	Text   []string // paragraphs
	Code   string   // a preformatted block (a file), after the text
	Tables []Table
	Charts []Chart
}

// Table is a table of a section; each row has as many cells as Header.
type Table struct {
	ID      string
	Caption string
	Header  []string
	Rows    [][]Cell
}

// Cell is one table cell: its text and how it reads.
type Cell struct {
	Text  string
	Class string // "" text, "num" a figure, "pass", "fail", "marked" (beyond a limit)
}

// Chart is one chart, inline SVG.
type Chart struct {
	ID    string
	Title string
	SVG   template.HTML
}

// Config is the config the page shows: as YAML, with its hash.
type Config struct {
	Title string // "config", "base scenario", "calibrated scenario"
	Text  string
	Hash  string
}

// Data is a document embedded in the page and offered for download
// under File: its bytes exactly as written beside the report.
type Data struct {
	ID   string // element id: "data-result"
	File string // download name: "result.json"
	Body []byte
}

// chartOptions draw a page's charts: lines reduced by LTTB to a few
// hundred points, enough for the width a page gives a chart.
var chartOptions = plots.Options{MaxPoints: 800}

// chartSection is the page's "charts" section: charts as inline SVG, or
// the error that drawing them met.
func chartSection(charts []*plots.Chart, err error) (Section, error) {
	if err != nil {
		return Section{}, err
	}
	svgs, err := svgCharts("chart", charts)
	return Section{ID: "charts", Title: "charts", Charts: svgs}, err
}

// svgCharts renders charts as inline SVG, with ids prefix-NAME.
func svgCharts(prefix string, charts []*plots.Chart) ([]Chart, error) {
	var out []Chart
	for _, c := range charts {
		var b bytes.Buffer
		if err := c.Encode(&b, "svg", chartOptions); err != nil {
			return nil, err
		}
		svg := b.String()
		// Inline SVG takes no XML prolog; the first element is the <svg>.
		if i := strings.Index(svg, "<svg"); i >= 0 {
			svg = svg[i:]
		}
		svg = strings.Replace(svg, "<svg", `<svg role="img" aria-label="`+template.HTMLEscapeString(c.Title)+`"`, 1)
		out = append(out, Chart{ID: prefix + "-" + c.Name, Title: c.Title, SVG: template.HTML(svg)})
	}
	return out, nil
}

var (
	//go:embed page.html.tmpl
	pageTemplate string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"css":      func() template.CSS { return template.CSS(pageCSS) },
	"js":       func() template.JS { return template.JS(pageJS) },
	"embedded": embedded,
}).Parse(pageTemplate))

// embedded is a document as the page holds it: a JSON string of base64
// of its gzip (the element's type is JSON: the template writes it as it
// is, and base64 holds no character that could end the element).
func embedded(body []byte) (template.JS, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := zw.Write(body); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return template.JS(`"` + base64.StdEncoding.EncodeToString(b.Bytes()) + `"`), nil
}

// WriteTo renders the page as HTML to w.
func (p *Page) WriteTo(w io.Writer) (int64, error) {
	return atomicfile.Func(func(w io.Writer) error { return tmpl.Execute(w, p) }).WriteTo(w)
}

// HTML renders the page.
func (p *Page) HTML() ([]byte, error) {
	var b bytes.Buffer
	_, err := p.WriteTo(&b)
	return b.Bytes(), err
}

// Write writes the page as dir/report.html, atomically: a reader, and a
// failure at any write, leave the earlier report or none, never a part.
// It returns the path written.
func Write(dir string, p *Page) (string, error) {
	return write(dir, p, nil)
}

// write is Write with the file seen through through (nil: as it is), for
// tests that fail its writes.
func write(dir string, p *Page, through func(io.Writer) io.Writer) (string, error) {
	path := filepath.Join(dir, File)
	if err := atomicfile.WriteFrom(path, buffered{p, through}); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// buffered writes a page through a buffer, so that the file sees a few
// large writes rather than one per template fragment.
type buffered struct {
	p       *Page
	through func(io.Writer) io.Writer
}

func (b buffered) WriteTo(w io.Writer) (int64, error) {
	if b.through != nil {
		w = b.through(w)
	}
	bw := bufio.NewWriter(w)
	n, err := b.p.WriteTo(bw)
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}
