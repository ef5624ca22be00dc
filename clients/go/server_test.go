package scorewire_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// addr is the host:port of the server every test talks to: SCOREWIRE_ADDR when set,
// else a server started by TestMain from SCOREWIRE_BIN on a free port.
var addr string

const readyPrefix = "scorewire listening on "

func TestMain(m *testing.M) {
	addr = os.Getenv("SCOREWIRE_ADDR")
	stop := func() {}
	if addr == "" {
		bin := os.Getenv("SCOREWIRE_BIN")
		if bin == "" {
			bin = "../../.venv/bin/scorewire"
		}
		var err error
		addr, stop, err = startServer(bin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "scorewire client tests:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// startServer runs `bin serve` on port 0 and reads the port from its ready line.
func startServer(bin string) (string, func(), error) {
	logFile, err := os.CreateTemp("", "scorewire-server-*.log")
	if err != nil {
		return "", nil, err
	}
	// Metrics on port 0 too, so parallel servers never collide on the default port.
	cmd := exec.Command(bin, "serve", "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0")
	// Its own state directory and the observe tests' evaluation rule.
	state, err := os.MkdirTemp("", "scorewire-state-")
	if err != nil {
		return "", nil, err
	}
	rules, err := filepath.Abs("../../tests/clients/observe_rules.yaml")
	if err != nil {
		return "", nil, err
	}
	cmd.Env = append(os.Environ(), "SCOREWIRE_STATE_DIR="+state, "SCOREWIRE_OBSERVE_RULES_FILE="+rules)
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start %s (set SCOREWIRE_BIN or SCOREWIRE_ADDR): %w", bin, err)
	}
	exited := make(chan struct{})
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
		_ = os.Remove(logFile.Name())
		_ = os.RemoveAll(state)
	}
	ready := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if line := scanner.Text(); strings.HasPrefix(line, readyPrefix) {
				ready <- strings.TrimSpace(strings.TrimPrefix(line, readyPrefix))
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout) // keep the pipe drained
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case a := <-ready:
		return a, stop, nil
	case <-exited:
	case <-time.After(60 * time.Second):
	}
	log, _ := os.ReadFile(logFile.Name())
	stop()
	return "", nil, fmt.Errorf("%s did not announce its port; stderr:\n%s", bin, tail(string(log), 4000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
