package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The README's first program, {@code examples/Hello.java}, run as its README says: the
 * {@code java} launcher compiles the single source file and runs it against the client's
 * classes and dependencies (this test's classpath without the test classes), with {@code
 * SCOREWIRE_ADDRESS} naming the test server. Its whole stdout must be {@code
 * examples/hello.expected.txt}, which the README shows below it.
 */
class HelloExampleTest extends LiveServerTest {
  private static final Path BASE = Path.of(System.getProperty("basedir", ".")).toAbsolutePath();

  @Test
  void helloPrintsExactlyTheExpectedOutput() throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    ProcessBuilder builder =
        new ProcessBuilder(
                java.toString(), "-cp", clientClasspath(), BASE.resolve("examples/Hello.java").toString())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    builder.environment().put("SCOREWIRE_ADDRESS", server.address);
    File stderr = File.createTempFile("hello-example", ".err");
    builder.redirectError(stderr);
    Process process = builder.start();
    String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
    String errors = Files.readString(stderr.toPath(), StandardCharsets.UTF_8);
    stderr.delete();
    assertEquals(0, process.exitValue(), "Hello exited with an error:\n" + errors);
    String expected = Files.readString(BASE.resolve("examples/hello.expected.txt"), StandardCharsets.UTF_8);
    assertEquals(expected, stdout);
  }

  /**
   * The client's compiled classes and its dependencies: surefire's test classpath (which
   * it also hands the tests as {@code surefire.test.class.path}) without the test classes.
   */
  private static String clientClasspath() {
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    return Arrays.stream(classpath.split(File.pathSeparator))
        .filter(entry -> !Path.of(entry).endsWith("test-classes"))
        .collect(Collectors.joining(File.pathSeparator));
  }
}
