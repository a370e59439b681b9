package sim

import "time"

// windowSeries is a per-window series: counts (attempts, accepts, ...)
// or, when level is set, a value sampled at each window's end (the
// handshakes waiting in a queue). Missing trailing entries are zero.
type windowSeries struct {
	v     []int64
	level bool
}

// add adds n to window w.
func (s *windowSeries) add(w int, n int64) {
	for w >= len(s.v) {
		s.v = append(s.v, 0)
	}
	s.v[w] += n
}

// halve merges pairs of windows into one of twice the length: counts add
// up; a level keeps its value at the end of the pair.
func (s *windowSeries) halve() {
	n := (len(s.v) + 1) / 2
	for i := range n {
		switch {
		case s.level && 2*i+1 < len(s.v):
			s.v[i] = s.v[2*i+1]
		case s.level:
			s.v[i] = 0
		case 2*i+1 < len(s.v):
			s.v[i] = s.v[2*i] + s.v[2*i+1]
		default:
			s.v[i] = s.v[2*i]
		}
	}
	clear(s.v[n:])
	s.v = s.v[:n]
}

// windows maps times to windows of one shared length, doubling the length
// whenever a time falls beyond limit windows, so that every series of a run
// holds at most limit entries however long the run: memory follows the
// windows' count, not the span of simulated time. Doubling merges whole
// windows, so the series stay exact at their final window length.
type windows struct {
	width  time.Duration
	limit  int
	series []*windowSeries // every series that must follow a doubling

	// The window of the last lookup, so that most lookups need no division.
	cur          int
	curLo, curHi time.Duration
}

// Series windows: at most maxWindowsTotal entries over all of a run's
// series, and per series between minSeriesWindows and maxSeriesWindows.
const (
	maxSeriesWindows = 1 << 16
	minSeriesWindows = 1 << 10
	maxWindowsTotal  = 1 << 20
)

// seriesLimit is how many windows each of a run's series may hold when
// there are n of them.
func seriesLimit(n int) int {
	return max(minSeriesWindows, min(maxSeriesWindows, maxWindowsTotal/max(n, 1)))
}

func (ws *windows) track(s *windowSeries) { ws.series = append(ws.series, s) }

// index returns the window holding t (>= 0), doubling the window length
// first if t lies beyond the limit.
func (ws *windows) index(t time.Duration) int {
	if t >= ws.curLo && t < ws.curHi {
		return ws.cur
	}
	ws.reach(t)
	w := int(t / ws.width)
	ws.cur, ws.curLo, ws.curHi = w, time.Duration(w)*ws.width, time.Duration(w+1)*ws.width
	return w
}

// reach doubles the window length until t falls within the limit.
func (ws *windows) reach(t time.Duration) {
	for t/ws.width >= time.Duration(ws.limit) {
		ws.width *= 2
		for _, s := range ws.series {
			s.halve()
		}
		ws.curLo, ws.curHi = 0, 0
	}
}
