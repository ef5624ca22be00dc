// Command go_observe measures what calling the Go client's Observer costs an HTTP
// handler: a net/http server on loopback answers GET /plain and GET /observed (the same
// handler, plus Observer.Observe of the answer), driven at a steady rate (open loop: a
// request is started every 1/rate s whatever the earlier ones do), the two paths
// alternating within each run (ABBA order across runs). Prints each phase's p50, p99 and
// max, then the median and spread across runs, and the Observer's counters.
// bench/observe_caller_bench.py starts the scorewire server and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

type phase struct{ p50, p99, max, inObserve99 time.Duration }

func main() {
	addr := flag.String("scorewire", "", "the scorewire server's host:port")
	rate := flag.Int("rate", 1000, "requests per second, steady")
	seconds := flag.Float64("seconds", 5, "length of each phase")
	runs := flag.Int("runs", 5, "runs, each one phase without and one with observe")
	warmup := flag.Float64("warmup", 2, "seconds of each path before the runs, not counted")
	flag.Parse()
	if *addr == "" {
		log.Fatal("-scorewire host:port is required")
	}
	client, err := scorewire.Dial(*addr)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	observer := client.NewObserver(scorewire.ObserverOptions{}) // the defaults a user gets

	// Every request's text differs (the server queues each one rather than answering
	// DUPLICATE); inObserve[i] is how long request i spent inside Observe.
	var seq atomic.Int64
	var inObserve []time.Duration
	answer := func(w http.ResponseWriter, r *http.Request) string {
		text := "Paris is the capital of France (request " + strconv.FormatInt(seq.Add(1), 10) + ")."
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, text)
		return text
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) { answer(w, r) })
	mux.HandleFunc("/observed", func(w http.ResponseWriter, r *http.Request) {
		text := answer(w, r)
		t0 := time.Now()
		observer.Observe(r.Context(), &scorewirev1.Observation{
			Sample:   &scorewirev1.Sample{Input: scorewire.MustValue("capital of France?")},
			Output:   scorewire.Text(text),
			Metadata: &scorewirev1.ObservationMetadata{Route: "/observed", Model: "bench"},
		})
		if i, err := strconv.Atoi(r.URL.Query().Get("n")); err == nil && i < len(inObserve) {
			inObserve[i] = time.Since(t0)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 0}}

	run := func(path string, d time.Duration) (phase, int64) {
		n := int(d.Seconds() * float64(*rate))
		lat := make([]time.Duration, n)
		inObserve = make([]time.Duration, n)
		var failed atomic.Int64
		var wg sync.WaitGroup
		interval := time.Second / time.Duration(*rate)
		start := time.Now()
		for i := range n {
			if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
				time.Sleep(wait)
			}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				t0 := time.Now()
				resp, err := hc.Get(base + path + "?n=" + strconv.Itoa(i))
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
				lat[i] = time.Since(t0)
				if err != nil || resp.StatusCode != 200 {
					failed.Add(1)
				}
			}(i)
		}
		wg.Wait()
		slices.Sort(lat)
		slices.Sort(inObserve)
		return phase{lat[n/2], lat[n*99/100], lat[n-1], inObserve[n*99/100]}, failed.Load()
	}

	phaseLen := time.Duration(*seconds * float64(time.Second))
	warm := time.Duration(*warmup * float64(time.Second))
	run("/plain", warm)
	run("/observed", warm)
	fmt.Printf("steady %d req/s, %.0f s per phase, %d runs (ABBA), scorewire at %s\n", *rate, *seconds, *runs, *addr)
	fmt.Printf("%-4s %-9s %9s %9s %9s %18s\n", "run", "path", "p50", "p99", "max", "p99 inside Observe")
	var plain, observed []phase
	var failures int64
	for r := range *runs {
		order := []string{"/plain", "/observed"}
		if r%2 == 1 {
			order = []string{"/observed", "/plain"}
		}
		for _, path := range order {
			p, failed := run(path, phaseLen)
			failures += failed
			inside := ""
			if path == "/observed" {
				inside = us(p.inObserve99)
			}
			fmt.Printf("%-4d %-9s %9s %9s %9s %18s\n", r+1, path, us(p.p50), us(p.p99), us(p.max), inside)
			if path == "/plain" {
				plain = append(plain, p)
			} else {
				observed = append(observed, p)
			}
		}
	}
	summary := func(name string, ps []phase) {
		p50s, p99s := pick(ps, func(p phase) time.Duration { return p.p50 }), pick(ps, func(p phase) time.Duration { return p.p99 })
		fmt.Printf("%-9s p50 median %s (%s-%s)  p99 median %s (%s-%s)\n", name,
			us(median(p50s)), us(p50s[0]), us(p50s[len(p50s)-1]), us(median(p99s)), us(p99s[0]), us(p99s[len(p99s)-1]))
	}
	fmt.Println("across runs (median, min-max):")
	summary("/plain", plain)
	summary("/observed", observed)
	deltas := make([]time.Duration, len(plain))
	for i := range plain {
		deltas[i] = observed[i].p99 - plain[i].p99
	}
	slices.Sort(deltas)
	fmt.Printf("p99 with observe minus without, same run: median %s (%s to %s)\n", us(median(deltas)), us(deltas[0]), us(deltas[len(deltas)-1]))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	closeErr := observer.Close(ctx)
	s := observer.Stats()
	fmt.Printf("observer: accepted %d, queued %d, duplicate %d, dropped %v, retries %d (close: %v); failed HTTP requests %d\n",
		s.Accepted, s.Queued, s.Duplicate, s.Dropped, s.Retries, closeErr, failures)
	if failures > 0 {
		os.Exit(1)
	}
}

func pick(ps []phase, f func(phase) time.Duration) []time.Duration {
	out := make([]time.Duration, len(ps))
	for i, p := range ps {
		out[i] = f(p)
	}
	slices.Sort(out)
	return out
}

func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }
