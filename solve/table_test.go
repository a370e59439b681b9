package solve

import (
	"bytes"
	"regexp"
	"testing"
)

// TestSensitivityIsWrittenAsTheLabelsRead: the guesses' golden has a
// base answer of 557 and 448.9 with a 5 s cap, so the change reads
// -108.1 (557 - 448.9 by hand) and the spread 108.1, as the labels
// beside them do, not the float difference 108.10000000000002.
func TestSensitivityIsWrittenAsTheLabelsRead(t *testing.T) {
	d, err := ReadDocument("../testdata/golden/solve-seed-window-guesses.json")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := d.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`policies\[0\]\.cap=5s\s+448\.9\s+-108\.1\s`, `policies\[0\]\.cap=30s\s+557\s+0\s`, `spread 108\.1\s`} {
		if !regexp.MustCompile(want).Match(b.Bytes()) {
			t.Errorf("no line matching %s in\n%s", want, b.String())
		}
	}
}

func TestShiftText(t *testing.T) {
	count := &Document{}
	dur := &Document{Vary: VaryDoc{Unit: "ms"}}
	for _, tt := range []struct {
		d      *Document
		v      float64
		signed bool
		want   string
	}{
		{count, 448.9 - 557, true, "-108.1"},
		{count, 557 - 448.9, false, "108.1"},
		{count, 20, true, "+20"},
		{count, 0, true, "0"},
		{dur, 1500, true, "+1.5s"},
		{dur, -250, true, "-250ms"},
	} {
		if got := tt.d.ShiftText(tt.v, tt.signed); got != tt.want {
			t.Errorf("ShiftText(%v, %v) = %q, want %q", tt.v, tt.signed, got, tt.want)
		}
	}
}
