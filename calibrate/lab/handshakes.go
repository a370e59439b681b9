package lab

import (
	"cmp"
	"slices"
	"time"

	"stormsim/calibrate/measured"
	"stormsim/gateway/client"
	"stormsim/gateway/protocol"
)

// crashHandshakes are the answered attempts of the drop rounds begun after
// origin (the crash storm's start), in ms from origin, per client the
// time until it saw its connection end, and per client how late its first
// attempt was sent: after its drop round began (its notice) and the wait
// it then drew, the one client process firing its timers late.
func crashHandshakes(events []client.Event, origin time.Time) (hs []measured.Handshake, noticeMs, firstLateMs []float64) {
	noticed := map[int]bool{}
	planned := map[int]time.Time{} // when the client's next attempt was due
	for _, ev := range events {
		if ev.Time.Before(origin) {
			continue
		}
		// A closed event belongs to the round whose connection ended (the
		// start round); everything after it to the drop round.
		if ev.Kind != client.EventClosed && ev.RoundKind != client.RoundDrop {
			continue
		}
		switch ev.Kind {
		case client.EventClosed:
			if !noticed[ev.Client] {
				noticed[ev.Client] = true
				noticeMs = append(noticeMs, ms(ev.Time.Sub(origin)))
			}
		case client.EventRound:
			planned[ev.Client] = ev.Time.Add(ev.Wait) // a round's first attempt is due after its wait
		case client.EventAttempt:
			h := measured.Handshake{Device: ev.Device, DeviceAttempt: ev.DeviceAttempt, Attempt: ev.Attempt,
				Status: ev.Status, SentMs: ms(ev.Sent.Sub(origin)), LatencyMs: ms(ev.Answered.Sub(ev.Sent))}
			if due, ok := planned[ev.Client]; ok {
				lag := max(ms(ev.Sent.Sub(due)), 0)
				if ev.Attempt > 1 {
					h.LagMs = lag
				} else {
					firstLateMs = append(firstLateMs, lag)
				}
			}
			planned[ev.Client] = ev.Answered.Add(ev.Wait)
			if ev.Status != 0 {
				hs = append(hs, h)
			}
		}
	}
	return hs, noticeMs, firstLateMs
}

// sentTimes maps every attempt in events to when it was sent.
func sentTimes(events []client.Event) map[attemptKey]time.Time {
	out := map[attemptKey]time.Time{}
	for _, ev := range events {
		if ev.Kind == client.EventAttempt {
			out[attemptKey{ev.Device, ev.DeviceAttempt}] = ev.Sent
		}
	}
	return out
}

// attachDecisions sets each handshake's GatewayMs and OutMs from the
// survivor's decisions on it. An admitted one's decision is its claim's,
// on the clock decisionsOf aligned; a 429's is its rejected line, on the
// same wall clock as the send. The line names the device but not the
// attempt, so a device's 429 answers are matched to its 429 lines in time
// order (a client has one attempt in flight), and only when there are as
// many of each.
func attachDecisions(hs []measured.Handshake, d gatewayDecisions) {
	claims := make(map[attemptKey]measured.Claim, len(d.claims))
	for _, c := range d.claims {
		claims[attemptKey{c.Device, c.Attempt}] = c
	}
	lines := map[string][]float64{}
	for i, t := range d.rejectsMs {
		lines[d.rejectDevices[i]] = append(lines[d.rejectDevices[i]], t)
	}
	answers := map[string][]int{} // indices into hs
	for i := range hs {
		h := &hs[i]
		switch {
		case h.Admitted():
			if c, ok := claims[attemptKey{h.Device, h.DeviceAttempt}]; ok {
				gateway, out := c.DoneMs-c.DecidedMs, c.DecidedMs-h.SentMs
				h.GatewayMs, h.OutMs = &gateway, &out
			}
		case h.Status == protocol.StatusTooManyRequests:
			answers[h.Device] = append(answers[h.Device], i)
		}
	}
	for device, idx := range answers {
		at := slices.Sorted(slices.Values(lines[device]))
		if len(at) != len(idx) {
			continue
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(hs[a].SentMs, hs[b].SentMs) })
		for k, i := range idx {
			out := at[k] - hs[i].SentMs
			hs[i].OutMs = &out
		}
	}
}

// markLate marks as wasted the admitted claims whose client gave up before
// its hello arrived (the attempt timed out after the gateway's 101): the
// work was done for a client that had gone, as the simulator counts an
// answer that reaches its client too late.
func markLate(claims []measured.Claim, events []client.Event) {
	late := map[attemptKey]bool{}
	for _, ev := range events {
		if ev.Kind == client.EventAttempt && ev.TimedOut {
			late[attemptKey{ev.Device, ev.DeviceAttempt}] = true
		}
	}
	for i := range claims {
		if late[attemptKey{claims[i].Device, claims[i].Attempt}] {
			claims[i].Wasted = true
		}
	}
}

// goneWays are, per handshake dropped unclaimed (dropped), the time from
// its client's deadline (its send, in events, plus timeout) to the
// gateway knowing the client had gone (its abandoned line), ms: the one
// client process firing its timeout late and its close reaching the
// gateway (network.gone). A drop without its send in events is left out,
// and a line written before the deadline counts as 0 (the two clocks are
// one wall clock, read a little apart).
func goneWays(dropped []droppedHandshake, events []client.Event, origin time.Time, timeout time.Duration) []float64 {
	if timeout <= 0 || len(dropped) == 0 {
		return nil
	}
	sent := sentTimes(events)
	out := make([]float64, 0, len(dropped))
	for _, d := range dropped {
		at, ok := sent[d.key]
		if !ok {
			continue
		}
		out = append(out, max(d.lineMs-ms(at.Add(timeout).Sub(origin)), 0))
	}
	return out
}
