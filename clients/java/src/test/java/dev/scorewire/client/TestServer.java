package dev.scorewire.client;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The scorewire server the tests talk to: the one at SCOREWIRE_ADDR when set, otherwise
 * SCOREWIRE_BIN (default ../../.venv/bin/scorewire from clients/java) started on a free
 * port, which is read from its {@code scorewire listening on HOST:PORT} line.
 */
final class TestServer implements AutoCloseable {
  private static final Pattern READY = Pattern.compile("^scorewire listening on (\\S+):(\\d+)\\s*$");
  private static final long START_TIMEOUT_S = 60;

  final String address;
  private final Process process;
  private final File stderr;

  private TestServer(String address, Process process, File stderr) {
    this.address = address;
    this.process = process;
    this.stderr = stderr;
  }

  static TestServer start() throws Exception {
    String address = System.getenv("SCOREWIRE_ADDR");
    if (address != null && !address.isEmpty()) {
      return new TestServer(address, null, null);
    }
    Path base = Path.of(System.getProperty("basedir", "."));
    String configured = System.getenv("SCOREWIRE_BIN");
    Path bin =
        configured != null && !configured.isEmpty()
            ? Path.of(configured).toAbsolutePath()
            : base.resolve("../../.venv/bin/scorewire").normalize().toAbsolutePath();
    File stderr = File.createTempFile("scorewire-server", ".log");
    ProcessBuilder builder =
        new ProcessBuilder(bin.toString(), "serve", "--host", "127.0.0.1", "--port", "0")
            .redirectError(stderr)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    // A free metrics port, so several servers (one per client's tests) can run at once.
    builder.environment().put("SCOREWIRE_METRICS_PORT", "0");
    // Its own state directory and the observe tests' evaluation rule.
    builder
        .environment()
        .put("SCOREWIRE_STATE_DIR", Files.createTempDirectory("scorewire-state").toString());
    builder
        .environment()
        .put(
            "SCOREWIRE_OBSERVE_RULES_FILE",
            base.resolve("../../tests/clients/observe_rules.yaml").normalize().toAbsolutePath().toString());
    Process process = builder.start();
    TestServer server = null;
    try {
      CompletableFuture<String> ready = new CompletableFuture<>();
      Thread reader = new Thread(() -> readStdout(process, ready), "scorewire-server-stdout");
      reader.setDaemon(true);
      reader.start();
      String found = ready.get(START_TIMEOUT_S, TimeUnit.SECONDS);
      server = new TestServer(found, process, stderr);
      return server;
    } catch (Exception e) {
      process.destroyForcibly();
      throw new IllegalStateException(
          "scorewire server " + bin + " did not start: " + e + "\n--- stderr ---\n" + tail(stderr), e);
    }
  }

  /** Completes {@code ready} with the address, then keeps draining stdout. */
  private static void readStdout(Process process, CompletableFuture<String> ready) {
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        Matcher m = READY.matcher(line);
        if (!ready.isDone() && m.matches()) {
          ready.complete(m.group(1) + ":" + m.group(2));
        }
      }
      ready.completeExceptionally(new IllegalStateException("exited before serving"));
    } catch (IOException e) {
      ready.completeExceptionally(e);
    }
  }

  private static String tail(File file) {
    try {
      String text = Files.readString(file.toPath(), StandardCharsets.UTF_8);
      return text.length() > 16_384 ? text.substring(text.length() - 16_384) : text;
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (process == null) {
      return;
    }
    process.destroy(); // SIGTERM: the server drains and exits.
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
    stderr.delete();
  }
}
