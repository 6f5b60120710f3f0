package clustertest

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"
)

// The clusters a test process has running, each with how to stop it. When `go test
// -timeout` fires, the testing package panics and exits without running t.Cleanup or the
// rest of TestMain, which would leave postmasters (and Patroni, etcd) running on the
// machine after their test process is gone; Run's watchdog stops them just before.
var live struct {
	mu    sync.Mutex
	next  int
	stops map[int]func()
}

// whileRunning records stop as the way to stop something the tests started, until the
// returned function says it has been stopped.
func whileRunning(stop func()) (stopped func()) {
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.stops == nil {
		live.stops = map[int]func(){}
	}
	live.next++
	id := live.next
	live.stops[id] = stop
	return func() {
		live.mu.Lock()
		defer live.mu.Unlock()
		delete(live.stops, id)
	}
}

// stopAllLive stops everything still recorded, and reports how many.
func stopAllLive() int {
	live.mu.Lock()
	stops := live.stops
	live.stops = nil
	live.mu.Unlock()
	var wg sync.WaitGroup
	for _, stop := range stops {
		wg.Add(1)
		go func() { defer wg.Done(); stop() }()
	}
	wg.Wait()
	return len(stops)
}

// watchdog arranges for the live clusters to be stopped shortly before the test binary's
// -test.timeout ends it; the returned function cancels that once the tests have ended.
func watchdog() (cancel func()) {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.timeout")
	if f == nil {
		return func() {}
	}
	timeout, ok := f.Value.(flag.Getter).Get().(time.Duration)
	if !ok || timeout <= 0 {
		return func() {}
	}
	t := time.AfterFunc(timeout-abortMargin(timeout), func() {
		fmt.Fprintf(os.Stderr, "clustertest: the test binary's %v timeout is near: stopping the %s\n",
			timeout, plural(stopAllLive(), "cluster"))
	})
	return func() { t.Stop() }
}

// abortMargin is how long before the timeout the clusters are stopped: long enough for a
// cluster's fast shutdown, a small part of a short timeout.
func abortMargin(timeout time.Duration) time.Duration {
	return min(max(timeout/10, time.Second), time.Minute)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what + " still running"
	}
	return fmt.Sprintf("%d %ss still running", n, what)
}
