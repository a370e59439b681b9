package sim

import (
	"reflect"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

func deployScenario(clients, gateways int, d DeploySpec) *Scenario {
	return &Scenario{Clients: clients, Seed: 2, Admission: models.AdmissionSpec{Kind: models.AdmissionUnlimited},
		Policies: []policies.Spec{{Kind: policies.KindFixed, Base: 100 * time.Millisecond}},
		Gateways: &models.PoolSpec{Count: gateways, Balancer: models.BalancerRoundRobin}, Deploy: &d}
}

// TestDeployDrainsTwice is socket.io's complaint, by hand: 4 clients on 2
// gateways (0 and 2 on gateway 0, 1 and 3 on gateway 1), admission
// unlimited, no latency, all goaways at once, a 1 s start-up.
//
//	t = 0  gateway 0 drains: clients 0 and 2 leave and reconnect at once,
//	       to gateway 1, the only one in rotation; gateway 0 exits.
//	t = 1s gateway 0 is back and in rotation; gateway 1 drains, holding
//	       all 4: they reconnect to gateway 0; gateway 1 is back at 2 s.
//
// Clients 0 and 2 are drained twice, 1 and 3 once: 6 attempts (2 at
// gateway 1, 4 at gateway 0), no time offline, and the deploy lasts 2 s.
func TestDeployDrainsTwice(t *testing.T) {
	s := resolved(t, deployScenario(4, 2, DeploySpec{Startup: time.Second}))
	res := runFirst(t, s)
	d := res.Deploy
	sec := float64(time.Second / time.Millisecond)
	want := &DeployResult{Gateways: 2, Batch: 1, DurationMs: 2 * sec,
		Drains: []DeployDrain{
			{Gateway: 0, StartMs: 0, LastGoawayMs: 0, ExitMs: 0, BackMs: sec, Connections: 2},
			{Gateway: 1, StartMs: sec, LastGoawayMs: sec, ExitMs: sec, BackMs: 2 * sec, Connections: 4},
		},
		Reconnects:          CountQuantiles{P50: 1, P99: 2, Max: 2}, // sorted 1, 1, 2, 2: ranks 2, 4 and 4
		Goaways:             6,
		DrainedMoreThanOnce: 2}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("deploy %+v\nwant   %+v", *d, *want)
	}
	if res.Attempts != 6 || res.Rejected != 0 || len(res.Gateways) != 2 || res.Gateways[0].Attempts != 4 || res.Gateways[1].Attempts != 2 {
		t.Errorf("%d attempts, %d rejected, per gateway %+v; want 6, 0, 4 at gateway 0 and 2 at gateway 1", res.Attempts, res.Rejected, res.Gateways)
	}
}

// TestDeployPacedAndTimed: 6 clients on 3 gateways, each drained one a
// second (batches of 1), with a 500 ms start-up and a 250 ms pause, not
// waiting for the restarted gateway. Gateway 0 holds clients 0 and 3 and
// tells them at 0 and 1 s, exiting at 1 s; the next drain is at 1 + 0.25
// s. Gateway 1 then holds 1 and 4 and one or both of 0 and 3 (round
// robin over gateways 1 and 2): every client's offline time is 0, since
// admission is unlimited and there is no jitter.
func TestDeployPacedAndTimed(t *testing.T) {
	no := false
	s := deployScenario(6, 3, DeploySpec{Startup: 500 * time.Millisecond, Pause: 250 * time.Millisecond, WaitReady: &no, Grace: time.Minute})
	s.Drain = &DrainSpec{Pace: models.DrainPaceSpec{Kind: models.PaceBatches, Size: 1, Interval: time.Second}}
	d := runFirst(t, resolved(t, s)).Deploy
	first := d.Drains[0]
	if first.Gateway != 0 || first.Connections != 2 || first.LastGoawayMs != 1000 || first.BackMs != 1500 {
		t.Errorf("first drain %+v: want gateway 0's 2 connections, the last told at 1 s, back at 1.5 s", first)
	}
	if second := d.Drains[1]; second.StartMs != 1250 {
		t.Errorf("second drain at %v ms, want 1250 (the first's exit and the pause)", second.StartMs)
	}
	if d.ClientSecondsOffline != 0 || d.NotBack != 0 {
		t.Errorf("offline %v s, %d not back; want none", d.ClientSecondsOffline, d.NotBack)
	}
}

// TestDeployOfflineTime: 4 clients on 2 gateways that admit one
// handshake per 400 ms slot, retrying every 100 ms when refused, a 10 s
// start-up; the time from each goaway to the client's connect is summed.
func TestDeployOfflineTime(t *testing.T) {
	s := deployScenario(4, 2, DeploySpec{Startup: 10 * time.Second})
	s.Gateways.Admission = &models.AdmissionSpec{Kind: models.AdmissionSlots, Slot: 400 * time.Millisecond, PerSlot: 1}
	d := runFirst(t, resolved(t, s)).Deploy
	// Gateway 0's clients 0 and 2 go to gateway 1 at t = 0: client 0 is
	// admitted in slot 0, client 2 retries every 100 ms and gets in at
	// 400 ms: 0.4 client-seconds. At 10 s gateway 0 is back, gateway 1's
	// 4 clients go to it at once: slots at 10, 10.4, 10.8 and 11.2 s, the
	// retries landing on 10.4, 10.8 and 11.2 exactly (100 ms steps):
	// 0 + 0.4 + 0.8 + 1.2 = 2.4. In all 2.8 client-seconds.
	if d.ClientSecondsOffline < 2.8-1e-9 || d.ClientSecondsOffline > 2.8+1e-9 {
		t.Errorf("offline %v client-seconds, want 2.8", d.ClientSecondsOffline)
	}
}

// TestDeployDrainFirstOut: 4 clients on 2 gateways (0 and 2 on gateway 0,
// 1 and 3 on gateway 1), admission unlimited, no other delay, each
// drain ending a session every 1 ms (goaway_per_s 1,000), and
// network.drain_first_out 5 ms. Gateway 0 drains at 0: clients 0 and 2
// end at 0 and 1 ms and send then; client 0's is before the drain's
// last end and arrives at 5 ms, client 2's at 1 ms. Gateway 1 drains at
// T (its drain's start), holding all 4, which end at T + 0, 1, 2 and 3 ms:
// client 1 (T + 1 ms) is first seen there, at T + 6 ms, client 3 (the
// last end) at T + 3 ms. Without drain_first_out each arrives at its end.
func TestDeployDrainFirstOut(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name string
		way  *models.Distribution
		want func(T time.Duration) []time.Duration
	}{
		{"no drain_first_out", nil, func(T time.Duration) []time.Duration { return []time.Duration{0, T + ms, ms, T + 3*ms} }},
		{"drain_first_out 5 ms", &models.Distribution{Dist: models.DistFixed, Value: 5 * ms},
			func(T time.Duration) []time.Duration { return []time.Duration{5 * ms, T + 6*ms, ms, T + 3*ms} }},
	} {
		s := deployScenario(4, 2, DeploySpec{Startup: time.Second})
		s.Capacity = &models.CapacitySpec{AdmitPerS: 1e6, GoawayPerS: 1000}
		if c.way != nil {
			s.Network = &models.NetworkSpec{DrainFirstOut: c.way}
		}
		got, res := firstAttempts(t, resolved(t, s))
		if len(res.Deploy.Drains) != 2 {
			t.Fatalf("%s: %d drains, want 2", c.name, len(res.Deploy.Drains))
		}
		T := time.Duration(res.Deploy.Drains[1].StartMs * float64(ms))
		if want := c.want(T); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: first attempts %v, want %v (second drain at %v)", c.name, got, want, T)
		}
	}
}
