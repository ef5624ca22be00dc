package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every program of {@code examples/} ({@code Name.java}, with its output in {@code
 * name.expected.txt}), run as the README says: the {@code java} launcher compiles the
 * single source file and runs it against the client's classes and dependencies (this
 * test's classpath without the test classes), with {@code SCOREWIRE_ADDRESS} naming the
 * test server. Its whole stdout must be the file. The README shows each program and that
 * output verbatim ({@code tests/clients/test_client_pages.py} holds them together), so every
 * Java block of the README runs here.
 *
 * <p>The programs run at once (JUnit's parallel execution, enabled in the pom for the tests
 * that ask for it): each spends seconds starting a JVM and compiling its source, and none
 * reads what another writes. The class itself runs alone, as every other class does: the
 * server and client of {@link LiveServerTest} are shared by all of them.
 */
class ExamplesTest extends LiveServerTest {
  private static final Path BASE = Path.of(System.getProperty("basedir", ".")).toAbsolutePath();
  private static final Path EXAMPLES = BASE.resolve("examples");

  static List<String> programs() throws IOException {
    try (Stream<Path> files = Files.list(EXAMPLES)) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".java")).sorted().toList();
    }
  }

  private static Path expectedOf(String program) {
    String stem = program.substring(0, program.length() - ".java".length());
    return EXAMPLES.resolve(stem.toLowerCase(Locale.ROOT) + ".expected.txt");
  }

  @Test
  void everyProgramHasItsOutputAndEveryOutputItsProgram() throws IOException {
    List<String> programs = programs();
    assertTrue(programs.contains("Hello.java"), "examples/Hello.java is missing");
    try (Stream<Path> files = Files.list(EXAMPLES)) {
      List<Path> outputs = files.filter(p -> p.toString().endsWith(".expected.txt")).sorted().toList();
      assertEquals(outputs, programs.stream().map(ExamplesTest::expectedOf).sorted().toList());
    }
  }

  @ParameterizedTest
  @MethodSource("programs")
  @Execution(ExecutionMode.CONCURRENT)
  void aProgramPrintsExactlyItsExpectedOutput(String program) throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    ProcessBuilder builder =
        new ProcessBuilder(java.toString(), "-cp", clientClasspath(), EXAMPLES.resolve(program).toString())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    builder.environment().put("SCOREWIRE_ADDRESS", server.address);
    // Both outputs go to files, so a program that never exits cannot block the test on a pipe.
    File stdout = File.createTempFile("example", ".out");
    File stderr = File.createTempFile("example", ".err");
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
    assertEquals(Files.readString(expectedOf(program), StandardCharsets.UTF_8), printed, program);
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
