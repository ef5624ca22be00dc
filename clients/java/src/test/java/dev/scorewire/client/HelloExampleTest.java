package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    runExample("Hello.java", "hello.expected.txt");
  }

  /** The README's "Observe production traffic" program: its answer acknowledged, none dropped. */
  @Test
  void observePrintsExactlyTheExpectedOutput() throws Exception {
    runExample("Observe.java", "observe.expected.txt");
  }

  private static void runExample(String program, String expectedFile) throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    ProcessBuilder builder =
        new ProcessBuilder(
                java.toString(), "-cp", clientClasspath(), BASE.resolve("examples/" + program).toString())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    builder.environment().put("SCOREWIRE_ADDRESS", server.address);
    // Both outputs go to files, so a program that never exits cannot block the test on a pipe.
    File stdout = File.createTempFile("hello-example", ".out");
    File stderr = File.createTempFile("hello-example", ".err");
    builder.redirectOutput(stdout).redirectError(stderr);
    Process process = builder.start();
    boolean exited = process.waitFor(90, TimeUnit.SECONDS);
    if (!exited) {
      process.destroyForcibly().waitFor();
    }
    String printed = Files.readString(stdout.toPath(), StandardCharsets.UTF_8);
    String errors = Files.readString(stderr.toPath(), StandardCharsets.UTF_8);
    stdout.delete();
    stderr.delete();
    assertTrue(exited, program + " did not exit within 90 s:\n" + errors);
    assertEquals(0, process.exitValue(), program + " exited with an error:\n" + errors);
    String expected = Files.readString(BASE.resolve("examples/" + expectedFile), StandardCharsets.UTF_8);
    assertEquals(expected, printed);
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
