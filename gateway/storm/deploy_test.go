package storm

import (
	"context"
	"testing"
	"time"

	"stormsim/gateway/client"
	"stormsim/models"
	"stormsim/policies"
)

// restartable is a fake gateway that a deploy drains (goaway and 1001 to
// everyone, then gone) and starts again on a fresh port.
type restartable struct {
	t  *testing.T
	id string
	g  *fakeGateway
}

func (r *restartable) Drain(context.Context) error {
	r.g.drain()
	r.g.kill()
	return nil
}

func (r *restartable) Start(context.Context) (string, error) {
	r.g = newFakeGateway(r.t, r.id, models.AdmissionSpec{Kind: models.AdmissionUnlimited})
	return r.g.url(), nil
}

// TestRollingDeploy drives a deploy of 3 gateways holding 30 clients:
// each gateway leaves the clients' list, drains, restarts on a new port
// and is back before the next; every client ends connected, each at
// least once drained, and the counts per gateway and per client add up to
// the phase's.
func TestRollingDeploy(t *testing.T) {
	const n = 30
	var gws []DeployGateway
	var urls []string
	for _, id := range []string{"gw-0", "gw-1", "gw-2"} {
		r := &restartable{t: t, id: id}
		u, _ := r.Start(context.Background())
		gws, urls = append(gws, r), append(urls, u)
	}
	b := mustBackoff(t, policies.Spec{Kind: "fixed", Base: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := Start(ctx, Config{Clients: n, Gateways: urls, GatewayInProcess: true, Window: 50 * time.Millisecond,
		Client: client.Config{Seed: 3, Conversations: []string{"room"}, Drop: client.Reconnect{Backoff: b},
			Drain: client.Reconnect{Backoff: b, InitialJitter: 20 * time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := st.Deploy(ctx, "deploy", DeployPlan{Gateways: gws, URLs: urls, Pause: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Drains) != 3 || !d.AllReconnected || d.NotBack != 0 {
		t.Fatalf("drains %+v, all back %v, %d not back", d.Drains, d.AllReconnected, d.NotBack)
	}
	for i, dr := range d.Drains {
		if dr.Gateway != i || dr.ExitMs < dr.StartMs || dr.BackMs < dr.ExitMs || (i > 0 && dr.StartMs < d.Drains[i-1].BackMs+50) ||
			dr.LastCloseMs < dr.StartMs || dr.LastCloseMs > dr.BackMs {
			t.Errorf("drain %d: %+v, want gateway %d, in order, each after the previous one's return and the pause, its last close read in it", i, dr, i)
		}
	}
	var attempts, accepted int64
	for _, g := range d.Gateways {
		attempts, accepted = attempts+g.Attempts, accepted+g.Accepted
	}
	if attempts != d.Attempts || accepted != d.Accepted {
		t.Errorf("per gateway %d attempts, %d accepted; the phase %d and %d", attempts, accepted, d.Attempts, d.Accepted)
	}
	// Every client starts on one of the three gateways, all drained: at
	// least one goaway each, and the goaways add up to the phase's.
	if d.Reconnects.P50 < 1 || d.Reconnects.Max < d.Reconnects.P99 || d.Goaways < n {
		t.Errorf("reconnects %+v over %d goaways, want every client drained", d.Reconnects, d.Goaways)
	}
	if d.DurationMs < d.Drains[2].BackMs || d.ClientSecondsOffline <= 0 {
		t.Errorf("duration %v ms, offline %v client-s", d.DurationMs, d.ClientSecondsOffline)
	}
}

// TestLastCloses: two drains of gateways A (0-100 ms, back at 100) and B
// (200-300 ms); closes read from A at 40 and 90 ms, from A at 250 ms (a
// reconnected client's, after A was back), from B at 210 and 260 ms, and
// a goaway from B at 280 ms. Drain A's last close is 90 ms, B's 260 ms.
func TestLastCloses(t *testing.T) {
	from := time.Unix(1000, 0)
	at := func(ms int) time.Time { return from.Add(time.Duration(ms) * time.Millisecond) }
	events := []client.Event{
		{Kind: client.EventClosed, Gateway: "A", Time: at(40)},
		{Kind: client.EventClosed, Gateway: "A", Time: at(90)},
		{Kind: client.EventClosed, Gateway: "A", Time: at(250)},
		{Kind: client.EventClosed, Gateway: "B", Time: at(260)},
		{Kind: client.EventClosed, Gateway: "B", Time: at(210)},
		{Kind: client.EventGoaway, Gateway: "B", Time: at(280)},
	}
	got := lastCloses([]DeployDrain{{Gateway: 0, StartMs: 0, ExitMs: 95, BackMs: 100}, {Gateway: 1, StartMs: 200, ExitMs: 290, BackMs: 300}},
		[]string{"A", "B"}, events, from)
	if got[0].LastCloseMs != 90 || got[1].LastCloseMs != 260 {
		t.Errorf("last closes %v and %v ms, want 90 and 260", got[0].LastCloseMs, got[1].LastCloseMs)
	}
}
