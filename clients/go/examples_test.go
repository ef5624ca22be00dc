package scorewire_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestExamplesPrintTheirExpectedOutput runs every program of examples/ (each
// examples/NAME/main.go with its output in examples/NAME/NAME.expected.txt) as a user
// does (go run) against the test server, and compares its whole output with the file.
// The README shows each program and that output verbatim (tests/clients/test_client_pages.py
// holds them together), so every Go block of the README runs here.
func TestExamplesPrintTheirExpectedOutput(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go run needs the go command on PATH: %v", err)
	}
	expected, err := filepath.Glob("examples/*/*.expected.txt")
	if err != nil || len(expected) == 0 {
		t.Fatalf("no examples/*/*.expected.txt: %v", err)
	}
	for _, path := range expected {
		dir := filepath.Dir(path)
		if filepath.Base(path) != filepath.Base(dir)+".expected.txt" {
			t.Errorf("%s: an example's output is named after its directory", path)
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// go run compiles first: minutes on a cold cache, never forever.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, goBin, "run", "./"+dir)
			cmd.WaitDelay = 10 * time.Second // then stop waiting for the program go run started
			cmd.Env = append(os.Environ(), "SCOREWIRE_ADDRESS="+addr)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("go run ./%s: %v\n%s", dir, err, stderr.String())
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s printed\n%s\nwant (%s)\n%s", dir, got, path, want)
			}
		})
	}
}
