package runner

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// ForEach calls fn(i) for every i in [0, n) on up to workers goroutines (0
// means runtime.GOMAXPROCS), handing out indexes in increasing order. fn
// must only write state owned by index i. It returns the error of the
// lowest failing index; a panic in fn is returned as an error, since no
// caller can recover a panic in another goroutine. After an error, indexes
// not yet handed out are skipped.
func ForEach(n, workers int, fn func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if errs[i] = call(fn, i); errs[i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func call(fn func(int) error, i int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("run %d panicked: %v", i, r)
		}
	}()
	return fn(i)
}
