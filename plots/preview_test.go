package plots

import (
	"flag"
	"os"
	"testing"
)

var previewDir = flag.String("preview", "", "write sample charts from synthetic data into this directory")

// TestPreview writes every chart kind from synthetic data for a person to
// look at: go test ./plots -run Preview -preview /tmp/plots-preview
func TestPreview(t *testing.T) {
	if *previewDir == "" {
		t.Skip("no -preview directory")
	}
	dir := *previewDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	seed := seedModelRun()
	if _, err := Write(dir, seed, Options{}); err != nil {
		t.Fatal(err)
	}
	lab := labRun()
	labDir := dir + "/lab"
	os.MkdirAll(labDir, 0o755)
	if _, err := Write(labDir, lab, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range seed.Policies {
		t.Logf("%s: %d windows, p99 %.0f ms, convergence %.0f ms", p.Policy, len(p.AttemptsPerWindow), p.ConnectP99Ms, p.ConvergenceMs)
	}
}
