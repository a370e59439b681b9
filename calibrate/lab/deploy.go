package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"stormsim/calibrate/measured"
	"stormsim/gateway/client"
	"stormsim/gateway/logline"
	"stormsim/gateway/storm"
	"stormsim/models"
)

// deployGatewayID names gateway g of a deploy lab.
func deployGatewayID(g int) string { return "gw-" + strconv.Itoa(g) }

// deployGateway is one gateway of the deploy lab as the storm driver
// drives it: drained (SIGTERM, its exit waited for and checked) and
// started again on the same port, under the same id.
type deployGateway struct {
	r    *labRun
	g    int
	proc *gatewayProc
	past uint64 // CPU ticks of its exited processes
}

func (d *deployGateway) Drain(ctx context.Context) error {
	id := deployGatewayID(d.g)
	if err := d.proc.signal(syscall.SIGTERM); err != nil {
		return err
	}
	d.r.mark(id, "sigterm")
	code, err := d.proc.wait(ctx, gatewayExitWait+d.r.plan.DrainGrace)
	if err != nil {
		return err
	}
	d.r.mark(id, "exited "+strconv.Itoa(code))
	if ticks, ok := d.proc.cpuTicks(); ok {
		d.past += ticks
	}
	left, err := d.r.db.RouteCount(ctx, id)
	if err != nil {
		return fmt.Errorf("count routes of %s: %w", id, err)
	}
	d.r.res.DeployExits = append(d.r.res.DeployExits, code)
	d.r.res.DeployRoutesLeft += left
	return nil
}

func (d *deployGateway) Start(ctx context.Context) (string, error) {
	p, err := d.r.startDeployGateway(ctx, d.g, d.proc.addr)
	if err != nil {
		return "", err
	}
	d.proc = p
	return p.url(), nil
}

// cpuTicks is the gateway's CPU over all its processes.
func (d *deployGateway) cpuTicks() (uint64, bool) {
	now, ok := d.proc.cpuTicks()
	return d.past + now, ok
}

// startDeployGateway starts gateway g of the deploy on listen ("" for a
// free port).
func (r *labRun) startDeployGateway(ctx context.Context, g int, listen string) (*gatewayProc, error) {
	p, id := r.plan, deployGatewayID(g)
	n := 0
	for _, proc := range r.procs {
		if proc.spec.ID == id {
			n++
		}
	}
	proc, err := startGateway(ctx, r.lab.GatewayBin, gatewaySpec{ID: id, Lease: p.Lease, Ping: p.Ping, Idle: p.Idle, Admission: p.Deploy.Admission,
		DrainGrace: p.DrainGrace, Abandoned: p.Abandoned, MaxQueue: p.MaxQueue, DBConns: gatewayDBConns, DBURL: r.lab.DatabaseURL, Schema: r.schema,
		DrainPace: p.DrainPace, Hint: p.ReconnectHint, Listen: listen, LogPath: filepath.Join(r.logDir, fmt.Sprintf("%s.%d.log", id, n+1))})
	if err == nil {
		r.procs = append(r.procs, proc)
	}
	return proc, err
}

// runDeploy is a deploy lab's run: the pool's gateways start, the clients
// connect (client c to gateway c mod count), and every gateway is drained
// and restarted in turn while the clients reconnect by the random
// balancer's draws (models.RandomPick, as the model picks).
func (r *labRun) runDeploy(ctx context.Context) error {
	p := r.plan
	dl := p.Deploy
	gws := make([]*deployGateway, dl.Gateways)
	urls := make([]string, dl.Gateways)
	for g := range gws {
		proc, err := r.startDeployGateway(ctx, g, "")
		if err != nil {
			return err
		}
		gws[g], urls[g] = &deployGateway{r: r, g: g, proc: proc}, proc.url()
	}
	reconnect, err := p.reconnects(r.res.Seed)
	if err != nil {
		return err
	}
	all := append([]string(nil), urls...)
	choose := func(pk client.Pick) string {
		if pk.RoundKind == client.RoundStart {
			return all[pk.Client%len(all)]
		}
		// Round 1 is the start: round k follows the client's (k-1)-th goaway.
		g := models.RandomPick(dl.Seed, uint64(pk.Client), uint64(pk.Attempt), uint64(pk.Round-1), len(pk.Gateways))
		return pk.Gateways[g]
	}
	reconnect.Choose = choose
	writeMarker(r.lab.Record, runMarker{Event: "run", Client: -1, Run: r.res.Run, Seed: r.res.Seed, Schema: r.schema})
	r.storm, err = storm.Start(ctx, storm.Config{
		Clients:     p.Clients,
		Gateways:    urls,
		Client:      reconnect,
		StartSpread: time.Duration(p.Clients) * time.Millisecond,
		Window:      p.Window,
		Timeout:     time.Hour,
		MaxClients:  r.lab.MaxClients,
		Record:      r.lab.Record,
	})
	if err != nil {
		return err
	}
	r.progress("%d clients connected to %d gateways", p.Clients, dl.Gateways)
	own := []cpuClock{selfClock}
	targets := make([]storm.DeployGateway, len(gws))
	for g, d := range gws {
		own, targets[g] = append(own, d.cpuTicks), d
	}
	r.load.stormStarts(own)
	sum, err := r.storm.Deploy(ctx, "deploy", storm.DeployPlan{Gateways: targets, URLs: urls, Order: dl.Order, Pause: dl.Pause})
	r.load.stormSettled(own)
	r.res.Load = r.load.load
	if err != nil {
		return err
	}
	r.res.Deploy = &sum
	origin := r.storm.T0().Add(durationOfMs(sum.StartMs))
	sent := sentTimes(r.storm.Events())
	var decisions measured.Series
	for _, proc := range r.procs {
		if !slices.ContainsFunc(proc.log.all(), func(l logLine) bool { return l.Msg == logline.Admitted }) {
			continue // admitted nobody in the deploy: a process that only held clients before it
		}
		dec, err := decisionsOf(proc.log.all(), origin, sent)
		if err != nil {
			return fmt.Errorf("gateway %s: %w", proc.spec.ID, err)
		}
		decisions.Merge(dec.series(p.Window, 0))
	}
	r.res.DeployDecisions = &decisions
	if r.res.DeployGoawayLegsMs, err = deployGoawayLegs(r.procs, r.storm.Events(), origin); err != nil {
		return err
	}
	r.progress("deploy settled: %d attempts, %d goaways, %d clients drained more than once, last back after %.0f ms",
		sum.Attempts, sum.Goaways, sum.DrainedMoreThanOnce, sum.DurationMs)
	return nil
}

// deployGoawayLegs are the deploy's goaways' ways (goawayLegs), every
// drained process's: a drained session's end counts for the process of
// its url that logged the device's goaway. A restarted process keeps its
// predecessor's url, but it drains no one in the deploy.
func deployGoawayLegs(procs []*gatewayProc, events []client.Event, origin time.Time) ([]float64, error) {
	ends := map[string][]client.Event{} // by url
	told := map[int]bool{}
	for _, ev := range events {
		if ev.Time.Before(origin) {
			continue
		}
		switch {
		case ev.Kind == client.EventGoaway:
			told[ev.Client] = true
		case ev.Kind == client.EventClosed && told[ev.Client]:
			ends[ev.Gateway] = append(ends[ev.Gateway], ev)
			delete(told, ev.Client)
		}
	}
	var out []float64
	for _, proc := range procs {
		legs, _, err := goawayLegs(proc.log.all(), ends[proc.url()], origin)
		if err != nil {
			return nil, fmt.Errorf("gateway %s: %w", proc.spec.ID, err)
		}
		out = append(out, legs...)
	}
	return out, nil
}

// deployChecks are a deploy lab run's checks: the seed's drain invariant
// at every drain, and everyone back.
func deployChecks(p Plan, r *measured.Run) []measured.Check {
	d := r.Deploy
	var out []measured.Check
	add := func(kind, name, expected, observed string, pass bool) {
		out = append(out, measured.Check{Run: r.Run, Kind: kind, Name: name, Expected: expected, Observed: observed, Pass: pass})
	}
	exits := 0
	for _, code := range r.DeployExits {
		if code == 0 {
			exits++
		}
	}
	n := p.Deploy.Gateways
	add("normal", "every drain", fmt.Sprintf("%d gateways drained, each exit 0 owning no route; every goaway followed by 1001", n),
		fmt.Sprintf("%d drained, %d exit 0, routes left %d; goaways %d, 1001 %d", len(r.DeployExits), exits, r.DeployRoutesLeft, d.Goaways, d.Closes["1001"]),
		len(r.DeployExits) == n && exits == n && r.DeployRoutesLeft == 0 && d.Goaways == d.Closes["1001"] && d.Goaways >= int64(p.Clients))
	add("recovery", "all back at head", fmt.Sprintf("%d clients connected at the end, at head", p.Clients),
		fmt.Sprintf("%d not back, %d at head, %d stopped", d.NotBack, d.AtHead, d.Stopped),
		d.NotBack == 0 && d.AtHead == p.Clients && d.Stopped == 0)
	return out
}
