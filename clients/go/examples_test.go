package scorewire_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestHelloExamplePrintsTheExpectedOutput runs examples/hello, the README's first
// program, as a user does (go run) against the test server and compares its whole
// output with examples/hello/hello.expected.txt, which the README shows below it.
func TestHelloExamplePrintsTheExpectedOutput(t *testing.T) {
	runExample(t, "./examples/hello", "examples/hello/hello.expected.txt")
}

// TestObserveExamplePrintsTheExpectedOutput runs examples/observe, the README's
// "Observe production traffic" program: its answer is acknowledged, nothing dropped.
func TestObserveExamplePrintsTheExpectedOutput(t *testing.T) {
	runExample(t, "./examples/observe", "examples/observe/observe.expected.txt")
}

func runExample(t *testing.T, pkg, expected string) {
	want, err := os.ReadFile(expected)
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go run needs the go command on PATH: %v", err)
	}
	// go run compiles first: minutes on a cold cache, never forever.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "run", pkg)
	cmd.WaitDelay = 10 * time.Second // then stop waiting for the program go run started
	cmd.Env = append(os.Environ(), "SCOREWIRE_ADDRESS="+addr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run %s: %v\n%s", pkg, err, stderr.String())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s printed\n%s\nwant (%s)\n%s", pkg, got, expected, want)
	}
}
