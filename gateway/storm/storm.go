// Package storm is the real storm driver: it connects N of the project's own
// clients (goroutines) to real gateways, waits until all are connected, then
// observes phases (a gateway killed, a gateway drained) and measures each
// reconnect storm on the client side: every attempt as an NDJSON line, and a
// Summary per phase comparable with the simulator's result.
//
// Client i is number i in the draws, exactly as the simulator numbers
// clients, so with the scenario's seed and policy the clients wait exactly
// the simulated waits.
package storm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"stormsim/gateway/client"
)

// Defaults of Config.
const (
	DefaultWindow     = 250 * time.Millisecond // the seed lab's bucket
	DefaultTimeout    = 2 * time.Minute        // whole storm, Start to Close
	DefaultMaxClients = 10_000
)

// Config describes a storm.
type Config struct {
	// Clients is the number of devices, numbered 0..Clients-1.
	Clients int
	// Gateways are the URLs the clients connect to at the start; change
	// them between phases with SetGateways.
	Gateways []string
	// Client is the template of every client: Seed, Drop, Drain,
	// Conversations, timeouts, ping, HTTPClient, Clock. Device, Index and
	// Gateways are set per client; an Observer is called after the storm's.
	Client client.Config
	// Devices, if set, holds one device per client (len >= Clients), e.g.
	// to keep attempt counters across storms against the same database.
	// Otherwise client i is DeviceID(i) with token DeviceToken and a fresh
	// in-memory counter.
	Devices []client.Device
	// StartSpread spreads the first connects: client i starts
	// i*StartSpread/Clients after Start. 0 starts everyone at once.
	StartSpread time.Duration
	// Window is the Summary's series bucket; default DefaultWindow.
	Window time.Duration
	// Timeout bounds the storm from Start to Close; default DefaultTimeout.
	Timeout time.Duration
	// MaxClients refuses larger storms; default DefaultMaxClients.
	MaxClients int
	// AllowNonLoopback permits gateways on other hosts.
	AllowNonLoopback bool
	// GatewayInProcess says the gateways run in this process, so the
	// file-descriptor check counts both ends of every connection.
	GatewayInProcess bool
	// Record, if set, receives one JSON object per event and marker.
	Record io.Writer
}

// DeviceID is the seed's device naming: u-000-d1, u-001-d1, ...
func DeviceID(i int) string { return fmt.Sprintf("u-%03d-d1", i) }

// DeviceToken is the seed's token of device id: tok-<id>.
func DeviceToken(id string) string { return "tok-" + id }

func (c Config) withDefaults() (Config, error) {
	if c.MaxClients == 0 {
		c.MaxClients = DefaultMaxClients
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	switch {
	case c.Clients < 1 || c.Clients > c.MaxClients:
		return c, fmt.Errorf("storm: clients must be in [1, %d] (got %d)", c.MaxClients, c.Clients)
	case c.Devices != nil && len(c.Devices) < c.Clients:
		return c, fmt.Errorf("storm: %d devices for %d clients", len(c.Devices), c.Clients)
	case c.Window < 0 || c.Timeout < 0 || c.StartSpread < 0:
		return c, fmt.Errorf("storm: window, timeout and start spread must be >= 0 (got %v, %v, %v)", c.Window, c.Timeout, c.StartSpread)
	case len(c.Gateways) == 0 && c.Client.Choose == nil:
		return c, errors.New("storm: no gateways")
	}
	for _, g := range c.Gateways {
		if err := checkGateway(g, c.AllowNonLoopback); err != nil {
			return c, fmt.Errorf("storm: %w", err)
		}
	}
	if c.Client.Clock == nil {
		c.Client.Clock = client.SystemClock
	}
	return c, checkFDs(c.Clients, c.GatewayInProcess)
}

// Storm is a running storm. Its methods are safe for concurrent use.
type Storm struct {
	cfg     Config
	clock   client.Clock
	t0      time.Time
	rec     *recorder
	clients []*client.Client
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	connect Summary

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when a client connects or stops
	state   []clientState
}

// clientState is what waitAll needs of a client: it counts as back once
// its sync after the latest connect is done.
type clientState struct {
	synced     bool // connected and synced, not closed since
	lastSynced time.Time
	stopped    bool
	err        error
}

// Start launches the clients and returns once every client is connected
// and synced.
// ctx (and Config.Timeout) bounds the whole storm, not just the start. It
// fails, with the storm closed, if a client stops before connecting or time
// runs out.
func Start(ctx context.Context, cfg Config) (*Storm, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Storm{cfg: cfg, clock: cfg.Client.Clock, changed: make(chan struct{}), state: make([]clientState, cfg.Clients)}
	s.t0 = s.clock.Now()
	s.ctx, s.cancel = context.WithTimeout(ctx, cfg.Timeout)
	s.rec = newRecorder(s.t0, cfg.Record)
	s.rec.marker(Line{Event: "header", Clients: cfg.Clients, Seed: cfg.Client.Seed, Gateways: cfg.Gateways, WindowMs: ms(cfg.Window)})
	for i := range cfg.Clients {
		c, err := client.New(s.clientConfig(i))
		if err != nil {
			s.cancel()
			return nil, fmt.Errorf("storm: client %d: %w", i, err)
		}
		s.clients = append(s.clients, c)
	}
	for i, c := range s.clients {
		s.wg.Add(1)
		go s.run(c, time.Duration(int64(cfg.StartSpread)*int64(i)/int64(cfg.Clients)))
	}
	err = s.waitAll(s.ctx, s.t0)
	s.connect = Summarize("connect", s.rec.snapshot(), s.t0, s.t0, cfg.Clients, cfg.Window)
	if err == nil {
		err = s.firstStopped()
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("storm: start: %w", err)
	}
	return s, nil
}

func (s *Storm) clientConfig(i int) client.Config {
	c := s.cfg.Client
	c.Index = i
	c.Gateways = s.cfg.Gateways
	if s.cfg.Devices != nil {
		c.Device = s.cfg.Devices[i]
	} else {
		id := DeviceID(i)
		c.Device = client.Device{ID: id, Token: DeviceToken(id), Attempts: &client.MemoryCounter{}}
	}
	next := s.cfg.Client.Observer
	c.Observer = func(ev client.Event) {
		s.rec.event(ev)
		s.update(ev)
		if next != nil {
			next(ev)
		}
	}
	return c
}

func (s *Storm) run(c *client.Client, delay time.Duration) {
	defer s.wg.Done()
	if err := s.clock.Sleep(s.ctx, delay); err != nil {
		s.update(client.Event{Kind: client.EventStopped, Client: c.Index(), Err: err})
		return
	}
	c.Run(s.ctx) // the stopped event reports why it ended
}

func (s *Storm) update(ev client.Event) {
	if ev.Kind != client.EventSynced && ev.Kind != client.EventClosed && ev.Kind != client.EventStopped {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.state[ev.Client]
	switch ev.Kind {
	case client.EventSynced:
		st.synced, st.lastSynced = true, ev.Time
	case client.EventClosed:
		st.synced = false
	case client.EventStopped:
		st.synced, st.stopped, st.err = false, true, ev.Err
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitAll waits until every client is stopped or has synced on a
// connection made at or after from.
func (s *Storm) waitAll(ctx context.Context, from time.Time) error {
	for {
		s.mu.Lock()
		missing := 0
		for _, st := range s.state {
			if !st.stopped && (!st.synced || st.lastSynced.Before(from)) {
				missing++
			}
		}
		changed := s.changed
		s.mu.Unlock()
		if missing == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d clients not connected: %w", missing, len(s.state), ctx.Err())
		}
	}
}

func (s *Storm) firstStopped() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, st := range s.state {
		if st.stopped {
			return fmt.Errorf("client %d stopped before the storm: %w", i, st.err)
		}
	}
	return nil
}

// Observe runs one phase: it marks the phase's origin, calls trigger (kill
// or drain a gateway; nil to only watch), then waits until every client has
// either reconnected and synced after the origin or stopped, and summarizes
// the phase.
// The trigger must drop every client, or Observe waits until ctx or the
// storm's timeout ends; the Summary is returned with the error then too.
func (s *Storm) Observe(ctx context.Context, label string, trigger func(context.Context) error) (Summary, error) {
	return s.ObserveUntil(ctx, label, trigger, 0)
}

// ObserveUntil is Observe with a horizon: when horizon > 0 it stops waiting
// at origin + horizon, with no error, and the Summary counts only what
// happened before then (attempts sent before it, hellos and closes before
// it), as the simulator stops a run at its horizon. The clients go on
// until Close. Summary.AllReconnected says whether the phase converged.
func (s *Storm) ObserveUntil(ctx context.Context, label string, trigger func(context.Context) error, horizon time.Duration) (Summary, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	from := s.clock.Now()
	s.rec.marker(Line{TMs: ms(from.Sub(s.t0)), Event: "phase", Label: label})
	var err error
	if trigger != nil {
		if err = trigger(ctx); err != nil {
			err = fmt.Errorf("storm %s: trigger: %w", label, err)
		}
	}
	wait, end := ctx, time.Time{}
	if horizon > 0 {
		end = from.Add(horizon)
		var stop context.CancelFunc
		wait, stop = context.WithDeadline(ctx, end)
		defer stop()
	}
	if err == nil {
		err = s.waitAll(wait, from)
		if err != nil && horizon > 0 && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = nil // the horizon cut the phase: its outcome says so
		}
		if err != nil {
			err = fmt.Errorf("storm %s: %w", label, err)
		}
	}
	s.rec.marker(Line{TMs: ms(s.clock.Now().Sub(s.t0)), Event: "settled", Label: label})
	events := s.rec.snapshot()
	if horizon > 0 {
		events = Before(events, end)
	}
	sum := Summarize(label, events, s.t0, from, s.cfg.Clients, s.cfg.Window)
	if ferr := s.rec.flush(); err == nil && ferr != nil {
		err = fmt.Errorf("storm %s: record: %w", label, ferr)
	}
	return sum, err
}

// Summarize measures the events from from on, as Observe does.
func (s *Storm) Summarize(label string, from time.Time) Summary {
	return Summarize(label, s.rec.snapshot(), s.t0, from, s.cfg.Clients, s.cfg.Window)
}

// SetGateways points every client's next attempts at urls (checked as in
// Config.Gateways), as a load balancer's pool changes.
func (s *Storm) SetGateways(urls []string) error {
	if len(urls) == 0 {
		return errors.New("storm: no gateways")
	}
	for _, g := range urls {
		if err := checkGateway(g, s.cfg.AllowNonLoopback); err != nil {
			return fmt.Errorf("storm: %w", err)
		}
	}
	for _, c := range s.clients {
		c.SetGateways(urls)
	}
	return nil
}

// Connect returns the summary of the start: every first connect, with the
// start as origin (the handshake latency figure of an unthrottled gateway).
func (s *Storm) Connect() Summary { return s.connect }

// Clients returns the clients, index i being client i (cursors, heads,
// devices).
func (s *Storm) Clients() []*client.Client { return s.clients }

// T0 returns the origin of the record's timeline.
func (s *Storm) T0() time.Time { return s.t0 }

// Events returns a copy of every client event so far.
func (s *Storm) Events() []client.Event { return s.rec.snapshot() }

// Close stops every client, waits for them and flushes the record; it
// returns the first record write error.
func (s *Storm) Close() error {
	s.cancel()
	s.wg.Wait()
	return s.rec.flush()
}
