// Command observe hands an HTTP handler's answer to scorewire for online evaluation;
// Observe returns at once and never fails the request.
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

func main() {
	address := os.Getenv("SCOREWIRE_ADDRESS")
	if address == "" {
		address = "127.0.0.1:50051"
	}
	client, err := scorewire.Dial(address)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	observer := client.NewObserver(scorewire.ObserverOptions{BufferSize: 10_000})

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		question := r.URL.Query().Get("q")
		answer := "Paris is the capital of France." // your model's output
		fmt.Fprintln(w, answer)
		// The trace and span ids come from r.Context()'s OpenTelemetry span, if any.
		observer.Observe(r.Context(), &scorewirev1.Observation{
			Sample:   &scorewirev1.Sample{Input: scorewire.MustValue(question)},
			Output:   scorewire.Text(answer),
			Metadata: &scorewirev1.ObservationMetadata{Route: "/answer", Model: "my-model"},
		})
	})
	// One request here; a service serves until it is told to stop (http.ListenAndServe).
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, httptest.NewRequest("GET", "/answer?q=capital+of+France", nil))
	fmt.Print(w.Body.String())

	// At shutdown: send what is buffered, for at most 5 s.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := observer.Close(ctx); err != nil {
		log.Print(err) // the deadline passed: the rest was dropped, and counted
	}
	s := observer.Stats()
	dropped := uint64(0)
	for _, n := range s.Dropped {
		dropped += n
	}
	fmt.Printf("acknowledged: %d, dropped: %d\n", s.Queued+s.Duplicate, dropped)
}
