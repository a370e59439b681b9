package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportRebuildsThePageRunWrote: stormsim report DIR writes, from
// result.json alone, the very report.html stormsim run -o wrote; a
// directory stormsim did not write is bad input, in one line, exit 2.
func TestReportRebuildsThePageRunWrote(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := stormsim("run", "-c", ownConfigs[0], "-o", dir, "--charts=false"); code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	page := filepath.Join(dir, "report.html")
	written, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(page)
	code, stdout, stderr := stormsim("report", dir)
	if code != ExitOK || !strings.HasPrefix(stdout, "wrote "+page+" (") {
		t.Fatalf("report: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	again, err := os.ReadFile(page)
	if err != nil || !bytes.Equal(again, written) {
		t.Errorf("the rebuilt report (%d bytes) is not the one run wrote (%d bytes): %v", len(again), len(written), err)
	}
	empty := t.TempDir()
	for _, args := range [][]string{{"report", empty}, {"report", filepath.Join(dir, "result.json")}, {"report"}, {"report", dir, dir}} {
		code, _, stderr := stormsim(args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, code, stderr)
		}
	}
}
