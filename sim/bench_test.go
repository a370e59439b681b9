package sim

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// stormScenario is the speed target: N clients, 10 ms slots
// admitting N/200 each, full jitter with base 100 ms and cap 3.2 s.
func stormScenario(n int) *Scenario {
	s := &Scenario{
		Seed:      1,
		Clients:   n,
		Admission: models.AdmissionSpec{Kind: "slots", Slot: 10 * time.Millisecond, PerSlot: n / 200},
		Policies:  []policies.Spec{{Kind: "full", Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond}},
	}
	if err := s.Resolve(); err != nil {
		panic(err)
	}
	return s
}

// BenchmarkStorm reports attempts per second and bytes allocated per client
// (an upper bound on the peak, since nothing is freed to the collector
// mid-run that is not counted).
//
//	go test ./sim -run '^$' -bench Storm -benchtime 3x
func BenchmarkStorm(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			s := stormScenario(n)
			pol := mustBackoff(b, s.Policies[0])
			var attempts int64
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				attempts += Run(s, pol, uint64(i)+1).Attempts
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(attempts)/b.Elapsed().Seconds(), "attempts/s")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(n), "bytes/client")
		})
	}
}

// BenchmarkStormWithModels is the failure-model target: 1,000,000 clients
// of a dead gateway, a 5-gateway least-connections pool (4 survivors with
// token buckets), lognormal handshake latency, reset detection, leases and
// database load ("models"); and the same with each survivor claiming 5,000
// handshakes a second behind a bucket taken on arrival, clients that give
// up on a handshake after 2 s, and a 5 minute horizon ("queues+timeouts").
//
//	go test ./sim -run '^$' -bench StormWithModels -benchtime 2x
func BenchmarkStormWithModels(b *testing.B) {
	for _, c := range []struct {
		name   string
		change func(*Scenario)
	}{
		{"models", func(*Scenario) {}},
		{"queues+timeouts", func(s *Scenario) {
			s.Horizon = 5 * time.Minute
			s.Policies[0].Timeout = 2 * time.Second
			s.Capacity = &models.CapacitySpec{AdmitPerS: 5000, RejectPerS: 200_000, Decide: models.DecideOnArrival}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := &Scenario{
				Seed:      1,
				Clients:   1_000_000,
				Admission: models.AdmissionSpec{Kind: "token_bucket", Rate: 5000, Burst: 500, RetryAfter: time.Second},
				Policies:  []policies.Spec{{Kind: "full", Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond}},
				Detection: &models.DetectionSpec{Kind: "reset", Delay: models.Distribution{Dist: "uniform", Min: 0, Max: 500 * time.Millisecond}},
				Lease:     &models.LeaseSpec{Duration: 1500 * time.Millisecond},
				Network: &models.NetworkSpec{RTT: models.Distribution{Dist: "lognormal", Median: 30 * time.Millisecond, Sigma: 0.5},
					ServerTime: models.Distribution{Dist: "uniform", Min: time.Millisecond, Max: 5 * time.Millisecond}},
				Gateways: &models.PoolSpec{Count: 5, Balancer: "least_connections", HealthCheck: time.Second},
				Database: &models.DatabaseSpec{RowsPerSync: 25, ReadBudgetPerS: 25_000},
			}
			c.change(s)
			if err := s.Resolve(); err != nil {
				b.Fatal(err)
			}
			pol := mustBackoff(b, s.Policies[0])
			var attempts int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				attempts += Run(s, pol, uint64(i)+1).Attempts
			}
			b.ReportMetric(float64(attempts)/b.Elapsed().Seconds(), "attempts/s")
			b.ReportMetric(float64(attempts)/float64(b.N), "attempts/op")
		})
	}
}

// BenchmarkReferenceEngine runs the test oracle, a container/heap engine,
// on the 1,000,000-client storm, for comparison with BenchmarkStorm.
//
//	go test ./sim -run '^$' -bench ReferenceEngine -benchtime 2x
func BenchmarkReferenceEngine(b *testing.B) {
	s := stormScenario(1_000_000)
	pol := mustBackoff(b, s.Policies[0])
	var attempts int64
	for i := 0; i < b.N; i++ {
		r, _ := referenceRun(s, pol, uint64(i)+1, func(attemptTrace) {})
		attempts += r.Attempts
	}
	b.ReportMetric(float64(attempts)/b.Elapsed().Seconds(), "attempts/s")
}
