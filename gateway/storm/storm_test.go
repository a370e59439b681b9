package storm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"stormsim/gateway/client"
	"stormsim/models"
	"stormsim/policies"
	"stormsim/policies/rng"
)

func mustBackoff(t *testing.T, s policies.Spec) *policies.Backoff {
	t.Helper()
	b, err := policies.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readLines parses the NDJSON record.
func readLines(t *testing.T, b []byte) []Line {
	t.Helper()
	var lines []Line
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("record line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return lines
}

// TestCrashThenDrain runs the seed lab's two storms in miniature: clients on
// gw-a, gw-a killed, everyone back on gw-b through its token bucket; then
// gw-b drained to gw-c.
func TestCrashThenDrain(t *testing.T) {
	const n, seed = 30, 7
	bucket := models.AdmissionSpec{Kind: "token_bucket", Rate: 300, Burst: 5}
	a := newFakeGateway(t, "gw-a", models.AdmissionSpec{Kind: "unlimited"})
	b := newFakeGateway(t, "gw-b", bucket)
	c := newFakeGateway(t, "gw-c", models.AdmissionSpec{Kind: "unlimited"})
	drop := mustBackoff(t, policies.Spec{Kind: "full", Base: 20 * time.Millisecond, Cap: 160 * time.Millisecond})
	drain := mustBackoff(t, policies.Spec{Kind: "fixed", Base: 5 * time.Millisecond})
	const dropJitter, drainJitter = 40 * time.Millisecond, 10 * time.Millisecond

	var record bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := Start(ctx, Config{
		Clients:  n,
		Gateways: []string{a.url()},
		Client: client.Config{Seed: seed, Conversations: []string{"room"},
			Drop: client.Reconnect{Backoff: drop, InitialJitter: dropJitter}, Drain: client.Reconnect{Backoff: drain, InitialJitter: drainJitter}},
		Window:           50 * time.Millisecond,
		GatewayInProcess: true,
		Record:           &record,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Connect(); got.Accepted != n || !got.AllReconnected {
		t.Errorf("connect phase: accepted %d, all connected %v; want %d, true", got.Accepted, got.AllReconnected, n)
	}

	if err := st.SetGateways([]string{b.url()}); err != nil {
		t.Fatal(err)
	}
	crash, err := st.Observe(ctx, "crash", func(context.Context) error { a.kill(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetGateways([]string{c.url()}); err != nil {
		t.Fatal(err)
	}
	drained, err := st.Observe(ctx, "drain", func(context.Context) error { b.drain(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	t.Run("crash summary agrees with the gateway", func(t *testing.T) {
		if !crash.AllReconnected || crash.Reconnected != n || crash.Accepted != n {
			t.Errorf("reconnected %d (all %v), accepted %d; want %d", crash.Reconnected, crash.AllReconnected, crash.Accepted, n)
		}
		if got, want := crash.Attempts, b.handshakes.Load(); got != want {
			t.Errorf("client attempts %d, gw-b handshakes %d", got, want)
		}
		if got, want := crash.Client429, b.tooMany.Load(); got != want || crash.ByStatus["429"] != want {
			t.Errorf("client 429s %d (by status %d), gw-b 429s %d", got, crash.ByStatus["429"], want)
		}
		if crash.Closes["-1"] != n || crash.FirstDropMs < 0 {
			t.Errorf("closes %v, first drop %v ms; want %d without a close frame", crash.Closes, crash.FirstDropMs, n)
		}
		if crash.AtHead != n {
			t.Errorf("at head %d, want %d", crash.AtHead, n)
		}
		checkSeries(t, crash)
	})
	t.Run("drain summary", func(t *testing.T) {
		if drained.Goaways != n || drained.Closes["1001"] != n || !drained.AllReconnected {
			t.Errorf("goaways %d, closes %v, all reconnected %v; want %d goaways and 1001s", drained.Goaways, drained.Closes, drained.AllReconnected, n)
		}
		checkSeries(t, drained)
	})
	t.Run("record replays the simulator's draws", func(t *testing.T) {
		lines := readLines(t, record.Bytes())
		if lines[0].Event != "header" || lines[0].Clients != n || lines[0].Seed != seed {
			t.Errorf("first line = %+v, want the header", lines[0])
		}
		type key struct{ client, round int }
		prev := map[key]time.Duration{}
		attempts := 0
		for _, l := range lines {
			rc := client.Reconnect{Backoff: drop, InitialJitter: dropJitter}
			if l.RoundKind == string(client.RoundDrain) {
				rc = client.Reconnect{Backoff: drain, InitialJitter: drainJitter}
			}
			switch {
			case l.Event == "round" && l.RoundKind != string(client.RoundStart):
				if want := ms(policies.InitialWait(seed, uint64(l.Client), rc.InitialJitter)); *l.WaitMs != want {
					t.Errorf("client %d round %d: initial wait %v ms, want %v", l.Client, l.Round, *l.WaitMs, want)
				}
			case l.Event == "attempt":
				attempts++
				if *l.Status == 101 {
					continue
				}
				k := key{l.Client, l.Round}
				w, raw, _ := rc.Backoff.Next(l.Attempt, prev[k], time.Duration(*l.RetryAfterMs*1e6), rng.Draw(seed, uint64(l.Client), uint64(l.Attempt), rng.StreamBackoff))
				prev[k] = raw
				if *l.WaitMs != ms(w) {
					t.Errorf("client %d round %d attempt %d: wait %v ms, want %v", l.Client, l.Round, l.Attempt, *l.WaitMs, ms(w))
				}
			}
		}
		if total := int(st.Connect().Attempts + crash.Attempts + drained.Attempts); attempts != total {
			t.Errorf("record has %d attempt lines, summaries count %d", attempts, total)
		}
		if len(prev) == 0 {
			t.Error("no rejected attempt in the crash storm: the bucket did not bite, the replay check checked nothing")
		}
	})
}

// checkSeries checks the per-window series against the totals.
func checkSeries(t *testing.T, s Summary) {
	t.Helper()
	var attempts, accepts int64
	for i, a := range s.Series.Attempts {
		if a != s.Series.Accepts[i]+s.Series.Rejects[i]+s.Series.Failed[i] {
			t.Errorf("window %d: attempts %d != accepts+rejects+failed", i, a)
		}
		attempts += a
		accepts += s.Series.Accepts[i]
	}
	if attempts != s.Attempts || accepts != s.Accepted {
		t.Errorf("series sum to %d attempts, %d accepts; totals %d, %d", attempts, accepts, s.Attempts, s.Accepted)
	}
	f := s.Series.ConnectedFraction
	if len(f) == 0 || f[len(f)-1] != 1 {
		t.Errorf("connected fraction %v does not end at 1", f)
	}
}

func TestStartRefuses(t *testing.T) {
	b := mustBackoff(t, policies.Spec{Kind: "fixed", Base: time.Millisecond})
	base := Config{Clients: 2, Gateways: []string{"ws://127.0.0.1:1"}, Client: client.Config{Drop: client.Reconnect{Backoff: b}}}
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"a remote host", func(c *Config) { c.Gateways = []string{"ws://192.0.2.1:8080"} }, "not loopback"},
		{"a remote host by name", func(c *Config) { c.Gateways = []string{"ws://example.com"} }, "not loopback"},
		{"more clients than the maximum", func(c *Config) { c.Clients, c.MaxClients = 11, 10 }, "clients must be in [1, 10]"},
		{"no clients", func(c *Config) { c.Clients = 0 }, "clients must be in"},
		{"too few devices", func(c *Config) { c.Devices = []client.Device{{ID: "x"}} }, "1 devices for 2 clients"},
		{"an unknown scheme", func(c *Config) { c.Gateways = []string{"tcp://127.0.0.1:1"} }, "scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			tt.change(&cfg)
			_, err := Start(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestStartFailsWhenAClientCannotConnect(t *testing.T) {
	g := newFakeGateway(t, "gw-a", models.AdmissionSpec{Kind: "unlimited"})
	g.mu.Lock()
	g.draining = true // 503 forever
	g.mu.Unlock()
	b := mustBackoff(t, policies.Spec{Kind: "fixed", Base: 5 * time.Millisecond, MaxAttempts: 3})
	_, err := Start(context.Background(), Config{Clients: 3, Gateways: []string{g.url()}, Client: client.Config{Drop: client.Reconnect{Backoff: b}}})
	if !errors.Is(err, client.ErrGaveUp) {
		t.Errorf("Start = %v, want ErrGaveUp", err)
	}
}

func TestObserveTimesOutWhenNobodyDrops(t *testing.T) {
	g := newFakeGateway(t, "gw-a", models.AdmissionSpec{Kind: "unlimited"})
	b := mustBackoff(t, policies.Spec{Kind: "fixed", Base: 5 * time.Millisecond})
	st, err := Start(context.Background(), Config{Clients: 2, Gateways: []string{g.url()}, Client: client.Config{Drop: client.Reconnect{Backoff: b}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	sum, err := st.Observe(ctx, "nothing", nil)
	if !errors.Is(err, context.DeadlineExceeded) || sum.AllReconnected || sum.Reconnected != 0 {
		t.Errorf("Observe = %v, reconnected %d; want a deadline error and nobody reconnected", err, sum.Reconnected)
	}
}
