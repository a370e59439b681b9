package gateway_test

import (
	"context"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stormsim/gateway"
	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// TestAdmissionBound is V4 with the seed lab's bucket (40/s, burst 10): 60
// devices storm one gateway, retrying quickly after every 429. Checks,
// independent of the bucket's code: in every window [t_i, t_j] spanned by
// admissions, at most burst + rate*(t_j - t_i) were admitted (the token
// times come from the "admitted" log lines); every 429 carried Retry-After;
// the client-side 429 count equals the gateway's counter; and 429s cost no
// query: the store saw exactly one authentication-and-claim per admitted
// handshake.
func TestAdmissionBound(t *testing.T) {
	const devices, rate, burst = 60, 40.0, 10
	s, _ := setup(t, devices)
	counting := &countingStore{Handshakes: s}
	cfg := testConfig("gw-admit")
	cfg.AdmitRate, cfg.AdmitBurst = rate, burst
	p := startInproc(t, cfg, gateway.Deps{Handshakes: counting, Leases: leasePool(t, s), Kicks: s})

	var rejected, badRetryAfter atomic.Int64
	var wg sync.WaitGroup
	clients := make([]*client, devices)
	for i := range devices {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(7, uint64(i)))
			for attempt := int64(1); ; attempt++ {
				c, resp, err := dial(context.Background(), p.addr, store.DeviceID(i), 0, attempt, true)
				if err == nil {
					clients[i] = c
					return
				}
				if status(resp) != protocol.StatusTooManyRequests {
					t.Errorf("device %d: status %d err %v", i, status(resp), err)
					return
				}
				rejected.Add(1)
				if resp.Header.Get(protocol.HeaderRetryAfter) != "1" {
					badRetryAfter.Add(1)
				}
				time.Sleep(time.Duration(5+rng.IntN(30)) * time.Millisecond) // faster than Retry-After on purpose
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var tokens []float64 // ms since gateway start
	for _, e := range p.logs.events(logline.Admitted) {
		tokens = append(tokens, e.num(logline.KeyTokenMs))
	}
	sort.Float64s(tokens)
	if len(tokens) != devices {
		t.Fatalf("%d admitted log lines, want %d", len(tokens), devices)
	}
	worst := 0.0
	for i := range tokens {
		for j := i; j < len(tokens); j++ {
			bound := burst + rate*(tokens[j]-tokens[i])/1000
			n := float64(j - i + 1)
			if n > bound+1e-9 {
				t.Fatalf("%v admitted in [%.3f, %.3f] ms, bound %.3f", n, tokens[i], tokens[j], bound)
			}
			worst = max(worst, n/bound)
		}
	}
	per250 := map[int]int{}
	for _, ms := range tokens {
		per250[int(ms-tokens[0])/250*250]++
	}
	t.Logf("admissions per 250 ms window from the first: %v; %d rejections; tightest window at %.0f%% of its bound", per250, rejected.Load(), 100*worst)
	m := p.g.Metrics()
	if badRetryAfter.Load() != 0 {
		t.Errorf("%d 429s without Retry-After: 1", badRetryAfter.Load())
	}
	if got := m.Rejected("429"); got != rejected.Load() || got == 0 {
		t.Errorf("gateway counted %d 429s, clients saw %d (want equal, > 0)", got, rejected.Load())
	}
	if calls := counting.calls.Load(); calls != devices {
		t.Errorf("%d store queries on the handshake path, want %d (one auth-and-claim per admission only)", calls, devices)
	}
	if n, _ := s.RouteCount(context.Background(), "gw-admit"); n != devices {
		t.Errorf("%d routes, want %d", n, devices)
	}
	for _, c := range clients {
		c.ws.CloseNow()
	}
}

// TestSourcePreLimit: admission comes before authentication, so a flood of
// bad credentials takes admission tokens; the per-source pre-limit caps what
// one source can take. A source flooding unknown devices gets its burst,
// then 429 (reason source), and the admission tokens it could not take are
// left for another source's real devices.
func TestSourcePreLimit(t *testing.T) {
	const flood, legit = 30, 5
	s, _ := setup(t, legit)
	cfg := scarceTokens("gw-source", 20)
	cfg.SourceRate, cfg.SourceBurst = 0.001, 5
	p := startInproc(t, cfg, depsOf(t, s))
	statuses := map[int]int{}
	for i := range flood {
		h := withHeader(wsHeaders(), protocol.HeaderAuthorization, "Bearer flood-"+strconv.Itoa(i)+":x")
		resp, _ := rawRequestFrom(t, "127.0.0.2", p.addr, "GET", protocol.Path+"?attempt=1", h)
		statuses[resp.StatusCode]++
	}
	if statuses[401] != cfg.SourceBurst || statuses[429] != flood-cfg.SourceBurst {
		t.Errorf("flood statuses %v, want %d x 401 then 429", statuses, cfg.SourceBurst)
	}
	for i := range legit {
		dev := store.DeviceID(i)
		h := withHeader(wsHeaders(), protocol.HeaderAuthorization, "Bearer "+dev+":"+store.DeviceToken(dev))
		if resp, _ := rawRequestFrom(t, "127.0.0.1", p.addr, "GET", protocol.Path+"?attempt=1", h); resp.StatusCode != 101 {
			t.Errorf("legitimate device %d after the flood: %d, want 101", i, resp.StatusCode)
		}
	}
	if got := p.g.Metrics().Rejected("source"); got != flood-int64(cfg.SourceBurst) {
		t.Errorf("rejected{reason=source} = %d, want %d", got, flood-cfg.SourceBurst)
	}
}
