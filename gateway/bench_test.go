package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"stormsim/gateway"
	"stormsim/gateway/store"
)

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
	s, _ := setup(b, clients)
	p := startInproc(b, gateway.DefaultConfig("gw-bench"), depsOf(b, s)) // the seed lab settings: lease 1.5s, ping 500ms
	var latencies []time.Duration
	var stormTime time.Duration
	b.StopTimer()
	for n := range b.N {
		lat := make([]time.Duration, clients)
		conns := make([]*client, clients)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range clients {
			wg.Go(func() {
				<-start
				began := time.Now()
				c, resp, err := dial(context.Background(), p.addr, store.DeviceID(i), 0, int64(n+1), true)
				if err != nil {
					b.Errorf("device %d: %d %v", i, status(resp), err)
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
