package storm

import (
	"context"
	"fmt"
	"slices"
	"time"

	"stormsim/gateway/client"
	"stormsim/internal/quantile"
)

// DeployGateway is one gateway of a rolling deploy, as the driver drives
// it: the caller's process, drained and started again.
type DeployGateway interface {
	// Drain drains the gateway (SIGTERM) and returns once its process has
	// exited.
	Drain(ctx context.Context) error
	// Start starts it again and returns its URL once it serves.
	Start(ctx context.Context) (string, error)
}

// DeployPlan is a rolling deploy of the storm's gateways, one at a time,
// as the simulator's deploy with batch 1 and wait_ready: each gateway is
// taken out of the clients' list (the balancer's rotation), drained,
// restarted, and back in the list before the next one drains.
type DeployPlan struct {
	// Gateways are the deployed gateways, with URLs their current URLs
	// in the same order: the storm's Gateways, client c having started
	// on URLs[c mod len].
	Gateways []DeployGateway
	URLs     []string
	Order    []int         // indexes into Gateways in drain order; default 0..n-1
	Pause    time.Duration // from a gateway back in the list to the next drain
}

// DeployDrain is one gateway's step of a deploy: ms from the deploy's
// start.
type DeployDrain struct {
	Gateway int     `json:"gateway"`
	StartMs float64 `json:"start_ms"` // out of the list, SIGTERM sent
	ExitMs  float64 `json:"exit_ms"`  // its process exited
	BackMs  float64 `json:"back_ms"`  // restarted and in the list again
	// LastCloseMs is the last of its connections' closes as its clients
	// read them (ms from the deploy's start, as the others): where the
	// model's drain ends (capacity.goaway_per_s is timed at these
	// closes), so BackMs - LastCloseMs is the model's deploy.startup.
	LastCloseMs float64 `json:"last_close_ms,omitempty"`
}

// GatewayCounts are the handshakes one gateway answered in a phase.
type GatewayCounts struct {
	Gateway              int   `json:"gateway"`
	Attempts             int64 `json:"attempts"`
	Accepted             int64 `json:"accepted"`
	Rejected             int64 `json:"rejected"` // answered with a status other than 101
	PeakAcceptsPerWindow int64 `json:"peak_accepts_per_window"`
}

// CountQuantiles are nearest-rank quantiles of a count per client, the
// rule of sim.CountQuantiles.
type CountQuantiles struct {
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

// DeploySummary is a rolling deploy measured on the clients: the phase's
// Summary (from the first drain), and what the simulator's DeployResult
// reports beside it.
type DeploySummary struct {
	Summary
	Drains   []DeployDrain   `json:"drains"`
	Gateways []GatewayCounts `json:"gateways"`
	// DurationMs is from the first drain to the later of the last
	// gateway's return and the last reconnect.
	DurationMs           float64        `json:"duration_ms"`
	Reconnects           CountQuantiles `json:"reconnects"` // goaways per client
	DrainedMoreThanOnce  int64          `json:"drained_more_than_once"`
	ClientSecondsOffline float64        `json:"client_seconds_offline"` // goaway to the next hello, summed
	NotBack              int            `json:"not_back"`               // clients without a connection at the end
}

// Deploy runs plan on the storm and waits until every client is back (or
// ctx ends), then measures the deploy from its start; label names the
// phase in the record.
func (s *Storm) Deploy(ctx context.Context, label string, plan DeployPlan) (DeploySummary, error) {
	n := len(plan.Gateways)
	if n < 2 || len(plan.URLs) != n {
		return DeploySummary{}, fmt.Errorf("storm: a deploy needs 2 or more gateways and their URLs (got %d and %d)", n, len(plan.URLs))
	}
	order := plan.Order
	if order == nil {
		for g := range n {
			order = append(order, g)
		}
	}
	urls := slices.Clone(plan.URLs)
	owner := map[string]int{} // every URL a gateway had, to count its handshakes
	for g, u := range urls {
		owner[u] = g
	}
	from := s.clock.Now()
	s.rec.marker(Line{TMs: ms(from.Sub(s.t0)), Event: "phase", Label: label})
	var drains []DeployDrain
	var drained []string // drain k's gateway URL
	run := func() error {
		for k, g := range order {
			if k > 0 && plan.Pause > 0 {
				if err := s.clock.Sleep(ctx, plan.Pause); err != nil {
					return err
				}
			}
			d := DeployDrain{Gateway: g, StartMs: ms(s.clock.Now().Sub(from))}
			drained = append(drained, urls[g])
			up := slices.Delete(slices.Clone(urls), g, g+1)
			if err := s.SetGateways(up); err != nil {
				return err
			}
			if err := plan.Gateways[g].Drain(ctx); err != nil {
				return fmt.Errorf("drain gateway %d: %w", g, err)
			}
			d.ExitMs = ms(s.clock.Now().Sub(from))
			u, err := plan.Gateways[g].Start(ctx)
			if err != nil {
				return fmt.Errorf("restart gateway %d: %w", g, err)
			}
			urls[g], owner[u] = u, g
			if err := s.SetGateways(urls); err != nil {
				return err
			}
			d.BackMs = ms(s.clock.Now().Sub(from))
			drains = append(drains, d)
		}
		return nil
	}
	err := run()
	if err == nil {
		if err = s.waitAll(ctx, from); err != nil {
			err = fmt.Errorf("storm %s: %w", label, err)
		}
	} else {
		err = fmt.Errorf("storm %s: %w", label, err)
	}
	s.rec.marker(Line{TMs: ms(s.clock.Now().Sub(s.t0)), Event: "settled", Label: label})
	events := s.rec.snapshot()
	out := summarizeDeploy(Summarize(label, events, s.t0, from, s.cfg.Clients, s.cfg.Window), events, from, owner, n, s.cfg.Window)
	out.Drains = lastCloses(drains, drained, events, from)
	if len(drains) > 0 {
		out.DurationMs = max(drains[len(drains)-1].BackMs, out.lastHelloMs(events, from))
	}
	if ferr := s.rec.flush(); err == nil && ferr != nil {
		err = fmt.Errorf("storm %s: record: %w", label, ferr)
	}
	return out, err
}

// lastCloses sets each drain's LastCloseMs: the last close its clients
// read of a connection to its gateway (urls[k], drain k's) from its
// SIGTERM until it was back.
func lastCloses(drains []DeployDrain, urls []string, events []client.Event, from time.Time) []DeployDrain {
	for _, ev := range events {
		if ev.Kind != client.EventClosed {
			continue
		}
		at := ms(ev.Time.Sub(from))
		for k := range drains {
			if d := &drains[k]; urls[k] == ev.Gateway && at >= d.StartMs && at <= d.BackMs {
				d.LastCloseMs = max(d.LastCloseMs, at)
			}
		}
	}
	return drains
}

// summarizeDeploy adds to a deploy phase's summary the counts per gateway
// and per client.
func summarizeDeploy(sum Summary, events []client.Event, from time.Time, owner map[string]int, gateways int, window time.Duration) DeploySummary {
	out := DeploySummary{Summary: sum, Gateways: make([]GatewayCounts, gateways)}
	accepts := make([][]int64, gateways)
	goaways := make([]int64, sum.Clients)
	leftAt := make([]time.Time, sum.Clients)
	connected := make([]bool, sum.Clients)
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b client.Event) int { return a.Time.Compare(b.Time) })
	for _, ev := range evs {
		known := ev.Client >= 0 && ev.Client < sum.Clients
		switch {
		case !known:
		case ev.Kind == client.EventConnected:
			connected[ev.Client] = true
			if !ev.Time.Before(from) && !leftAt[ev.Client].IsZero() {
				out.ClientSecondsOffline += ev.Time.Sub(leftAt[ev.Client]).Seconds()
				leftAt[ev.Client] = time.Time{}
			}
		case ev.Kind == client.EventClosed:
			connected[ev.Client] = false
		case ev.Kind == client.EventGoaway && !ev.Time.Before(from):
			goaways[ev.Client]++
			leftAt[ev.Client] = ev.Time
		case ev.Kind == client.EventAttempt && !ev.Sent.Before(from):
			g, ok := owner[ev.Gateway]
			if !ok {
				continue
			}
			c := &out.Gateways[g]
			c.Gateway = g
			c.Attempts++
			if ev.Status == statusAccepted {
				c.Accepted++
				w := int((ev.Sent.Sub(from) + ev.Answered.Sub(ev.Sent)/2) / window)
				for len(accepts[g]) <= w {
					accepts[g] = append(accepts[g], 0)
				}
				accepts[g][w]++
			} else if ev.Status != statusNoAnswer {
				c.Rejected++
			}
		}
	}
	for g := range out.Gateways {
		out.Gateways[g].Gateway = g
		if len(accepts[g]) > 0 {
			out.Gateways[g].PeakAcceptsPerWindow = slices.Max(accepts[g])
		}
	}
	for c := range goaways {
		if goaways[c] > 1 {
			out.DrainedMoreThanOnce++
		}
		if !connected[c] {
			out.NotBack++
		}
	}
	sorted := slices.Sorted(slices.Values(goaways))
	if k := int64(len(sorted)); k > 0 {
		out.Reconnects = CountQuantiles{P50: sorted[quantile.RankPercent(k, 50)-1], P99: sorted[quantile.RankPercent(k, 99)-1], Max: sorted[k-1]}
	}
	return out
}

// lastHelloMs is the last hello of the deploy, ms from its start.
func (d DeploySummary) lastHelloMs(events []client.Event, from time.Time) float64 {
	last := 0.0
	for _, ev := range events {
		if ev.Kind == client.EventConnected && !ev.Time.Before(from) {
			last = max(last, ms(ev.Time.Sub(from)))
		}
	}
	return last
}
