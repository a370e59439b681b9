package gateway_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/internal/pgtest"
)

// benchDBConns sizes BenchmarkHandshakes' handshake pool (and claim slots),
// to compare pool sizes: -bench.dbconns 16.
var benchDBConns = flag.Int("bench.dbconns", 8, "BenchmarkHandshakes: handshake pool size")

// BenchmarkHandshakes is the load figure: clients handshake with one
// in-process gateway at once (seed settings, admission unlimited, handshake
// pool of 8 connections), each through auth and claimRoute to 101 + hello,
// at two storm sizes. It reports admitted-and-claimed handshakes per second
// over the storm and the p50/p99 handshake latency as the clients see it
// (dial to hello). Clients, gateway and PostgreSQL share the machine.
//
//	go test ./gateway -run '^$' -bench BenchmarkHandshakes -benchtime 3x
func BenchmarkHandshakes(b *testing.B) {
	for _, clients := range []int{2000, 5000} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) { benchmarkStorm(b, clients) })
	}
}

func benchmarkStorm(b *testing.B, clients int) {
	s, schema := setup(b, clients)
	hs := s
	if *benchDBConns != 8 {
		var err error
		if hs, err = store.Open(context.Background(), pgtest.URL(b), store.Options{Schema: schema, AppName: "bench", MaxConns: int32(*benchDBConns)}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(hs.Close)
	}
	cfg := gateway.DefaultConfig("gw-bench") // the seed lab settings: lease 1.5s, ping 500ms
	cfg.ClaimConcurrency = *benchDBConns
	p := startInproc(b, cfg, gateway.Deps{Handshakes: hs, Leases: leasePool(b, s), Kicks: hs})
	var latencies []time.Duration
	var stormTime time.Duration
	b.StopTimer()
	for n := range b.N {
		lat := make([]time.Duration, clients)
		conns := make([]*client, clients)
		start := make(chan struct{})
		var failed atomic.Int64
		var firstErr atomic.Value
		var wg sync.WaitGroup
		for i := range clients {
			wg.Go(func() {
				<-start
				began := time.Now()
				c, resp, err := dial(context.Background(), p.addr, store.DeviceID(i), 0, int64(n+1), true)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("device %d: %d %v", i, status(resp), err))
					return
				}
				lat[i], conns[i] = time.Since(began), c
			})
		}
		b.StartTimer()
		began := time.Now()
		close(start)
		wg.Wait()
		stormTime += time.Since(began)
		b.StopTimer()
		if f := failed.Load(); f > 0 {
			b.Errorf("storm %d: %d of %d handshakes failed; first: %v", n+1, f, clients, firstErr.Load())
		}
		latencies = append(latencies, lat...)
		for _, c := range conns {
			if c != nil {
				c.ws.CloseNow()
			}
		}
		// The next storm starts once every route is released, so that no
		// release of this one competes with its claims.
		waitFor(b, 60*time.Second, "all routes released", func() bool {
			n, err := s.RouteCount(context.Background(), "gw-bench")
			return err == nil && n == 0 && p.g.Connections() == 0
		})
	}
	slices.Sort(latencies)
	q := func(f float64) float64 { return float64(latencies[int(f*float64(len(latencies)-1))]) / 1e6 }
	b.ReportMetric(float64(b.N*clients)/stormTime.Seconds(), "handshakes/s")
	b.ReportMetric(q(0.5), "p50_ms")
	b.ReportMetric(q(0.99), "p99_ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkSourceFlood measures what the per-source pre-limit buys against
// a flood of unknown devices from one address (127.0.0.2), which under
// "admission before authentication" takes admission tokens: 8 flooders
// send handshakes with bad credentials as fast as the gateway answers, each
// on one keep-alive connection,
// while 200 real devices, each from its own address (127.0.1.x), connect,
// each retrying 50 ms after a refusal. The admission bucket is 500/s (burst 50). It reports
// the flood's rate, the share of admission tokens the real devices got,
// and how long until all of them were connected, without and with
// --source-rate 20 --source-burst 20.
//
//	go test ./gateway -run '^$' -bench BenchmarkSourceFlood -benchtime 1x
func BenchmarkSourceFlood(b *testing.B) {
	for _, pre := range []float64{0, 20} {
		b.Run(fmt.Sprintf("source-rate=%g", pre), func(b *testing.B) { benchmarkSourceFlood(b, pre) })
	}
}

func benchmarkSourceFlood(b *testing.B, sourceRate float64) {
	const legit, flooders = 200, 8
	s, _ := setup(b, legit)
	cfg := testConfig("gw-flood")
	cfg.AdmitRate, cfg.AdmitBurst = 500, 50
	cfg.SourceRate, cfg.SourceBurst = sourceRate, 20
	p := startInproc(b, cfg, depsOf(b, s))
	var floodSent atomic.Int64
	var lastConnected, flooded time.Duration
	for range b.N {
		floodBegan := time.Now()
		stop := make(chan struct{})
		var fl sync.WaitGroup
		for f := range flooders {
			fl.Go(func() {
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
				hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 1}}
				defer hc.CloseIdleConnections()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					h := wsHeaders()
					h.Set(protocol.HeaderAuthorization, fmt.Sprintf("Bearer flood-%d-%d:x", f, i))
					req, _ := http.NewRequest("GET", "http://"+p.addr+protocol.Path+"?attempt=1", nil)
					req.Header = h
					if resp, err := hc.Do(req); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						floodSent.Add(1)
					}
				}
			})
		}
		time.Sleep(200 * time.Millisecond) // the flood is on
		began := time.Now()
		var wg sync.WaitGroup
		for i := range legit {
			wg.Go(func() {
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+i%250))}}
				hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
				for attempt := int64(1); ; attempt++ {
					ws, _, err := websocket.Dial(context.Background(), handshakeURL(p.addr, 0, attempt),
						&websocket.DialOptions{HTTPClient: hc, HTTPHeader: bearer(store.DeviceID(i))})
					if err == nil {
						ws.CloseNow()
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
		}
		wg.Wait()
		lastConnected = time.Since(began)
		time.Sleep(max(0, time.Second-lastConnected)) // at least a second of flood to measure its rate
		close(stop)
		fl.Wait()
		flooded += time.Since(floodBegan)
	}
	m := p.g.Metrics()
	tokens := m.Admitted.Load() + m.Rejected("401") + m.Rejected("409")
	b.ReportMetric(float64(floodSent.Load())/flooded.Seconds(), "flood_req/s")
	b.ReportMetric(float64(m.Admitted.Load())/float64(tokens), "real_share_of_tokens")
	b.ReportMetric(lastConnected.Seconds(), "s_until_all_real_connected")
	b.ReportMetric(0, "ns/op")
}
