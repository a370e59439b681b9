package lab

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"stormsim/calibrate/measured"
)

// DisturbedCores is the CPU, in cores, that other work may take before or
// during a real storm before the run counts as disturbed. Quiet runs on
// this project's 2-core machine saw up to 0.24 cores of other work (the
// system's own services); runs beside other builds and
// benchmarks saw 0.3-1.5, and the ones past 0.9 held the farthest
// outliers (a first wave three times slower, a quarter fewer attempts).
// The threshold sits just above what quiet runs saw. Kernel time not
// charged to any process (interrupts) is left out: loopback traffic puts
// the storm's own there.
const DisturbedCores = 0.25

// quietSample is how long the machine is watched before each run.
const quietSample = time.Second

// cpuSample is the machine's and some processes' CPU time at one moment,
// in clock ticks (USER_HZ, 1/100 s on Linux).
type cpuSample struct {
	total, busy uint64         // every CPU's ticks; those in user, nice and system time
	cpus        int            // CPUs
	own         map[int]uint64 // ticks of this program's processes, by their index in the list sampled
	db          map[int]uint64 // PostgreSQL's processes', by pid
}

// ticksPerSecond is USER_HZ, the unit of /proc's CPU times.
const ticksPerSecond = 100

// cpuClock reads one process's CPU time so far, in ticks; false when it
// cannot.
type cpuClock func() (uint64, bool)

// selfClock is this process's CPU clock: the clients are its goroutines.
func selfClock() (uint64, bool) { return processTicks(os.Getpid()) }

// cpuUse is what a window between two samples used, in cores: clients is
// the first own clock's share of own (this process's: the clients).
type cpuUse struct{ busy, own, clients, db float64 }

// other is the CPU of everything but this program and PostgreSQL.
func (u cpuUse) other() float64 { return max(u.busy-u.own-u.db, 0) }

// sampleCPU reads /proc: the machine's ticks, the own processes' (this
// one and its gateways) and every PostgreSQL process's.
func sampleCPU(own []cpuClock) (cpuSample, error) {
	s := cpuSample{own: map[int]uint64{}, db: map[int]uint64{}}
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 8 && f[0] == "cpu":
			for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return s, err
				}
				s.total += n
				if i < 3 {
					s.busy += n
				}
			}
		case len(f) > 0 && strings.HasPrefix(f[0], "cpu"):
			s.cpus++
		}
	}
	if s.cpus == 0 || s.total == 0 {
		return s, errors.New("/proc/stat: no cpu lines")
	}
	for i, clock := range own {
		if t, ok := clock(); ok {
			s.own[i] = t
		}
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		if t, ok := processTicks(pid); ok {
			s.db[pid] = t
		}
	}
	return s, nil
}

// processTicks is a process's user and system ticks (all its threads), from
// /proc/PID/stat.
func processTicks(pid int) (uint64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: count fields after it.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64) // field 14 of the whole line
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	return utime + stime, err1 == nil && err2 == nil
}

// since is the CPU used between s0 and s, in cores. A PostgreSQL process
// that s0 did not see started in between (a gateway's pool opening its
// connections as the storm begins): all its CPU counts. One that ended in
// between is lost to other work, which errs on the side of a disturbed
// run.
func (s cpuSample) since(s0 cpuSample) cpuUse {
	ticks := float64(s.total-s0.total) / float64(s.cpus) // elapsed, per CPU
	if ticks <= 0 {
		return cpuUse{}
	}
	delta := func(now, then map[int]uint64, born bool) float64 {
		var d uint64
		for k, t := range now {
			t0, ok := then[k]
			switch {
			case ok && t >= t0:
				d += t - t0
			case !ok && born:
				d += t
			}
		}
		return float64(d) / ticks
	}
	var clients float64 // the first own clock's: this process's
	if t, ok := s.own[0]; ok {
		if t0, ok := s0.own[0]; ok && t >= t0 {
			clients = float64(t-t0) / ticks
		}
	}
	return cpuUse{busy: float64(s.busy-s0.busy) / ticks, own: delta(s.own, s0.own, false), clients: clients, db: delta(s.db, s0.db, true)}
}

// loadAverage is /proc/loadavg's one-minute figure, 0 if unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// loadMeter measures a run's measured.Load: the second before it, then the
// crash storm.
type loadMeter struct {
	load   measured.Load
	start  cpuSample
	active bool // /proc is readable
}

// before watches the machine for quietSample while this program does
// nothing else; with wait > 0 it keeps watching, a sample at a time, until
// other work is below DisturbedCores or wait has passed.
func (m *loadMeter) before(ctx context.Context, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		m.load.Average1m = loadAverage()
		s0, err := sampleCPU(nil)
		if err != nil {
			return nil // no /proc: the load is not measured, and the report says so
		}
		select {
		case <-time.After(quietSample):
		case <-ctx.Done():
			return ctx.Err()
		}
		s1, err := sampleCPU(nil)
		if err != nil {
			return nil
		}
		m.active, m.load.Measured = true, true
		m.load.OtherBeforeCores = round2(s1.since(s0).other())
		if m.load.OtherBeforeCores <= DisturbedCores || !time.Now().Before(deadline) {
			return nil
		}
		m.load.WaitedMs += ms(quietSample)
	}
}

// stormStarts samples the CPU as the storm begins; own are this program's
// processes' clocks (this one's and the gateways', whose CPU counts even
// after they die: a killed gateway's last work, closing its connections,
// falls in the storm).
func (m *loadMeter) stormStarts(own []cpuClock) {
	if m.active {
		m.start, _ = sampleCPU(own)
	}
}

// stormSettled closes the window and judges the run.
func (m *loadMeter) stormSettled(own []cpuClock) {
	if !m.active || m.start.total == 0 {
		return
	}
	end, err := sampleCPU(own)
	if err != nil {
		return
	}
	u := end.since(m.start)
	m.load.OwnDuringCores, m.load.DatabaseCores, m.load.OtherDuringCores = round2(u.own), round2(u.db), round2(u.other())
	m.load.ClientsCores, m.load.Cores, m.load.BusyCores = round2(u.clients), end.cpus, round2(u.busy)
	m.load.Disturbed = disturbed(m.load)
}

// disturbed judges a run by the other work around it.
func disturbed(l measured.Load) bool {
	return l.Measured && (l.OtherBeforeCores > DisturbedCores || l.OtherDuringCores > DisturbedCores)
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
