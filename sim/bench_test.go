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
		Policies:  []policies.Spec{{Name: "full", Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond}},
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
