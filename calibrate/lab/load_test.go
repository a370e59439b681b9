package lab

import (
	"math"
	"os/exec"
	"testing"

	"stormsim/calibrate/measured"
)

// TestCPUUse: 200 ticks elapsed on each of 2 CPUs, 300 of them busy: 1.5
// cores. This program's processes took 80 ticks (0.4 cores); PostgreSQL's
// 40 from a backend both samples saw and 20 from one that started in
// between (0.3; the one that ended in between is lost): other work took
// the remaining 0.8 cores.
func TestCPUUse(t *testing.T) {
	s0 := cpuSample{total: 1000, busy: 400, cpus: 2, own: map[int]uint64{0: 100}, db: map[int]uint64{2: 50, 3: 70}}
	s1 := cpuSample{total: 1400, busy: 700, cpus: 2, own: map[int]uint64{0: 180}, db: map[int]uint64{2: 90, 4: 20}}
	u := s1.since(s0)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"busy", u.busy, 1.5}, {"own", u.own, 0.4}, {"database", u.db, 0.3}, {"other", u.other(), 0.8}} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v cores, want %v", c.name, c.got, c.want)
		}
	}
	if got := (cpuUse{busy: 0.5, own: 0.4, db: 0.3}).other(); got != 0 {
		t.Errorf("other = %v when this program and the database account for more than the busy time, want 0", got)
	}
}

// TestDisturbed: a run is disturbed when other work passed DisturbedCores
// before or during it; without /proc it cannot be judged.
func TestDisturbed(t *testing.T) {
	cases := []struct {
		name string
		load measured.Load
		want bool
	}{
		{"quiet", measured.Load{Measured: true, OtherBeforeCores: 0.05, OtherDuringCores: DisturbedCores}, false},
		{"busy before", measured.Load{Measured: true, OtherBeforeCores: DisturbedCores + 0.01}, true},
		{"busy during", measured.Load{Measured: true, OtherDuringCores: 1.2}, true},
		{"not measured", measured.Load{OtherDuringCores: 1.2}, false},
	}
	for _, c := range cases {
		if got := disturbed(c.load); got != c.want {
			t.Errorf("%s: disturbed = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSampleCPU reads this machine's /proc (where there is one): this
// process's clock is read.
func TestSampleCPU(t *testing.T) {
	s0, err := sampleCPU([]cpuClock{selfClock})
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	if _, ok := s0.own[0]; !ok || s0.cpus < 1 || s0.busy > s0.total {
		t.Errorf("sample %+v", s0)
	}
	if _, ok := processTicks(-1); ok {
		t.Error("ticks of a process that does not exist")
	}
}

// TestAGatewayThatDiedStillCounts: the killed gateway's last work (closing
// its connections) falls inside the storm; once the process has been
// waited for, its CPU comes from its exit status, where /proc has nothing
// left. A process that spins for a while and exits has used some.
func TestAGatewayThatDiedStillCounts(t *testing.T) {
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done")
	p := &gatewayProc{cmd: cmd, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	go func() { cmd.Wait(); p.state = cmd.ProcessState; close(p.exited) }()
	<-p.exited
	if _, ok := processTicks(cmd.Process.Pid); ok {
		t.Fatal("/proc still has the process after it was waited for")
	}
	if ticks, ok := p.cpuTicks(); !ok || ticks == 0 {
		t.Errorf("cpuTicks of the exited process = %d, %v; want its CPU time", ticks, ok)
	}
}
