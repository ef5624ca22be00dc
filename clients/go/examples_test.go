package scorewire_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestHelloExamplePrintsTheExpectedOutput runs examples/hello, the README's first
// program, as a user does (go run) against the test server and compares its whole
// output with examples/hello/hello.expected.txt, which the README shows below it.
func TestHelloExamplePrintsTheExpectedOutput(t *testing.T) {
	want, err := os.ReadFile("examples/hello/hello.expected.txt")
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go run needs the go command on PATH: %v", err)
	}
	cmd := exec.Command(goBin, "run", "./examples/hello")
	cmd.Env = append(os.Environ(), "SCOREWIRE_ADDRESS="+addr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run ./examples/hello: %v\n%s", err, stderr.String())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("examples/hello printed\n%s\nwant (hello.expected.txt)\n%s", got, want)
	}
}
