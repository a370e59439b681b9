package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"stormsim/gateway/logline"
)

// duplicateKeys walks one JSON value token by token and returns every key
// that appears twice in the same object, as a dotted path ("[]" for array
// elements). encoding/json's Unmarshal keeps the last value silently, which
// is how a duplicated key goes unnoticed by log readers.
func duplicateKeys(line []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	var dups []string
	if err := walkJSON(dec, "", &dups); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return dups, nil
}

func walkJSON(dec *json.Decoder, path string, dups *[]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k := kt.(string) // object keys are always strings
			if seen[k] {
				*dups = append(*dups, path+k)
			}
			seen[k] = true
			if err := walkJSON(dec, path+k+".", dups); err != nil {
				return err
			}
		}
	case json.Delim('['):
		for dec.More() {
			if err := walkJSON(dec, path+"[].", dups); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

func TestDuplicateKeys(t *testing.T) {
	cases := []struct {
		name string
		line string
		want []string
	}{
		{"unique", `{"msg":"x","gateway":"gw-a","count":3}`, nil},
		{"top-level twice", `{"gateway":"gw-b","msg":"sweep_reclaimed","gateway":"gw-a"}`, []string{"gateway"}},
		{"same key in separate objects", `{"a":{"a":1},"b":[{"a":1},{"a":2}]}`, nil},
		{"nested twice", `{"a":{"b":1,"c":null,"b":2}}`, []string{"a.b"}},
		{"inside an array", `{"l":[{"k":1,"k":2}]}`, []string{"l.[].k"}},
		{"three times", `{"k":1,"k":2,"k":3}`, []string{"k", "k"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := duplicateKeys([]byte(c.line))
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("duplicateKeys(%s) = %q, %v; want %q", c.line, got, err, c.want)
			}
		})
	}
	if _, err := duplicateKeys([]byte(`{"a":`)); err == nil {
		t.Error("truncated line: no error")
	}
}

// TestLogLinesHaveUniqueKeys runs a gateway's whole life as a subprocess (start,
// sweeping a SIGKILLed peer, SIGTERM drain, exit) and checks that no line of
// either log carries a key twice: the lifecycle lines feed the calibration
// records, where a duplicate would keep only one of the values.
func TestLogLinesHaveUniqueKeys(t *testing.T) {
	_, schema := setup(t, 3)
	a := startProc(t, schema, "gw-a", shortLease)
	b := startProc(t, schema, "gw-b", shortLease)
	connectAll(t, a.addr, 0, 2, 1)
	connectAll(t, b.addr, 2, 3, 1)
	a.signal(t, syscall.SIGKILL)
	waitFor(t, 5*time.Second, "gw-b sweeps gw-a", func() bool { return len(b.logs.events(logline.SweepReclaimed)) > 0 })
	b.signal(t, syscall.SIGTERM)
	if code := b.wait(t, 10*time.Second); code != 0 {
		t.Errorf("gw-b exit code %d, want 0", code)
	}
	a.wait(t, time.Second)

	for _, p := range []*proc{a, b} {
		p.logs.mu.Lock()
		data := bytes.Clone(p.logs.buf.Bytes())
		p.logs.mu.Unlock()
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			dups, err := duplicateKeys(line)
			if err != nil {
				t.Errorf("%s: line is not one JSON value (%v): %s", p.id, err, line)
			} else if len(dups) > 0 {
				t.Errorf("%s: keys %q repeated in %s", p.id, dups, line)
			}
		}
	}
	for _, msg := range []string{logline.Start, logline.Listening, logline.SweepReclaimed, logline.DrainStart, logline.DrainDone, logline.Exit} {
		if len(b.logs.events(msg)) == 0 {
			t.Errorf("gw-b never logged %s: the check above did not cover it", msg)
		}
	}
	if e := b.logs.events(logline.SweepReclaimed); len(e) > 0 && (e[0][logline.KeyGateway] != "gw-b" || e[0][logline.KeyDeadGateway] != "gw-a") {
		t.Errorf("sweep_reclaimed %v, want gateway gw-b (the sweeper) and dead_gateway gw-a", e[0])
	}
}
