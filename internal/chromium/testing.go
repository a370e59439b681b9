package chromium

import (
	"os"
	"testing"
)

// Need is the Chromium a test runs: without one on PATH the test skips,
// or fails with CI=true, where .ci/run installs Debian's chromium.
func Need(t testing.TB) string {
	t.Helper()
	path := Find()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and no Chromium on PATH: .ci/run installs Debian's chromium")
		}
		t.Skip("no Chromium on PATH (apt-get install chromium)")
	}
	return path
}
