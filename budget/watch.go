package budget

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// WatchEvery is how often Watch samples the process's memory.
const WatchEvery = 100 * time.Millisecond

// Watch keeps the process's memory under limit: it makes limit the
// runtime's soft memory limit (the collector works harder as the heap
// nears it) and calls over, once, if memory in use still passes 5/4 of
// it, so that a run the estimate misjudged ends with one line instead of
// the runtime's out-of-memory crash. stop ends the watch.
func Watch(limit int64, over func(used int64)) (stop func()) {
	previous := debug.SetMemoryLimit(limit)
	done := make(chan struct{})
	hard := limit + limit/4
	go func() {
		tick := time.NewTicker(WatchEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if used := InUse(); used > hard {
					over(used)
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		debug.SetMemoryLimit(previous)
	}
}

// InUse is the memory the Go runtime holds from the system and has not
// returned: what the process's resident size follows.
func InUse() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()) - int64(s[1].Value.Uint64())
}
