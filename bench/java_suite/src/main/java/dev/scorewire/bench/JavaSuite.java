package dev.scorewire.bench;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.ToNumberPolicy;
import com.google.gson.reflect.TypeToken;
import dev.scorewire.client.ScorewireClient;
import dev.scorewire.client.SuiteRun;
import dev.scorewire.client.Values;
import dev.scorewire.v1.Case;
import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSummary;
import dev.scorewire.v1.Sample;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Times RunSuite through the Java client on the peers' dataset.
 *
 * <p>Reads the records bench/peer_dataset.py makes (a JSON array of {@code {id, input,
 * expected, output}}, parsed into plain Java maps, lists, strings and numbers before the
 * clock starts), then times building the request from those values with {@link Values},
 * the call, and reading every result and the summary. {@code -json} sends input/expected
 * as JSON text ({@code input_json}, {@code expected_json}) instead of {@code Value}s.
 * {@code -warmup N -warmup-runs K} (default 20,000 and 3) first runs the same way K times,
 * untimed, on the first N records, so the JIT has compiled the path with C2 (a
 * long-running Java caller's state; after one run of 2,000 cases the timed run still
 * spends about three times the CPU, mostly compiling); {@code -warmup 0} times a cold JVM.
 *
 * <p>Prints one JSON line: {@code {"checks": N, "seconds": S, "build_s": B, "send_s": W,
 * "first_result_s": F, "client_cpu_s": C, "main_cpu_s": M, "request_bytes": R}} (build_s:
 * plain values to the built request; send_s: the call serializing and writing it;
 * first_result_s: from the start to the first result; client_cpu_s: this process's CPU
 * time over the timed run, every thread, JIT and GC included; main_cpu_s: the calling
 * thread's share).
 */
public final class JavaSuite {
  private JavaSuite() {}

  private record Timing(
      long scores, double seconds, double buildS, double sendS, double firstS, double cpuS, double mainCpuS, long bytes) {}

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  public static void main(String[] args) throws IOException {
    String addr = "127.0.0.1:50051";
    String recordsFile = null;
    String checksFile = null;
    boolean asJson = false;
    int warmup = 20_000;
    int warmupRuns = 3;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "-addr" -> addr = args[++i];
        case "-records" -> recordsFile = args[++i];
        case "-checks" -> checksFile = args[++i];
        case "-json" -> asJson = true;
        case "-warmup" -> warmup = Integer.parseInt(args[++i]);
        case "-warmup-runs" -> warmupRuns = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (recordsFile == null || checksFile == null) {
      throw new IllegalArgumentException(
          "usage: -addr HOST:PORT -records FILE -checks FILE [-json] [-warmup N] [-warmup-runs K]");
    }
    // Numbers as Long when whole, else Double: what a JSON parser hands a Java caller.
    Gson gson = new GsonBuilder().setObjectToNumberStrategy(ToNumberPolicy.LONG_OR_DOUBLE).create();
    List<Map<String, Object>> records = read(gson, recordsFile);
    List<Map<String, Object>> checks = read(gson, checksFile);
    try (ScorewireClient client =
        ScorewireClient.newBuilder(addr).streamDeadline(Duration.ofMinutes(5)).build()) {
      for (int i = 0; i < warmupRuns && warmup > 0; i++) {
        run(client, records.subList(0, Math.min(warmup, records.size())), checks, asJson);
      }
      Timing t = run(client, records, checks, asJson);
      System.out.printf(
          Locale.ROOT,
          "{\"checks\": %d, \"seconds\": %f, \"build_s\": %f, \"send_s\": %f, \"first_result_s\": %f,"
              + " \"client_cpu_s\": %f, \"main_cpu_s\": %f, \"request_bytes\": %d}%n",
          t.scores, t.seconds, t.buildS, t.sendS, t.firstS, t.cpuS, t.mainCpuS, t.bytes);
    }
  }

  private static Timing run(
      ScorewireClient client, List<Map<String, Object>> records, List<Map<String, Object>> checks, boolean asJson) {
    long cpu0 = OS.getProcessCpuTime();
    long mainCpu0 = THREADS.getCurrentThreadCpuTime();
    long t0 = System.nanoTime();
    RunSuiteRequest request = request(records, checks, asJson);
    long built = System.nanoTime();
    long first = 0;
    long scores = 0;
    int n = 0;
    try (SuiteRun run = client.runSuite(request)) {
      long sent = System.nanoTime(); // the blocking stub serializes and writes on this thread
      for (CaseResult result : run) {
        if (n++ == 0) {
          first = System.nanoTime();
        }
        scores += result.getScoresCount();
      }
      RunSummary summary = run.summary();
      long end = System.nanoTime();
      long cpu = OS.getProcessCpuTime() - cpu0;
      long mainCpu = THREADS.getCurrentThreadCpuTime() - mainCpu0;
      if (summary.getCases() != records.size() || n != records.size()) {
        throw new IllegalStateException(
            "summary counts " + summary.getCases() + " cases, read " + n + ", sent " + records.size());
      }
      // Measured after the clock stops (getSerializedSize is memoized, but not free).
      return new Timing(
          scores,
          (end - t0) / 1e9,
          (built - t0) / 1e9,
          (sent - built) / 1e9,
          (first - t0) / 1e9,
          cpu / 1e9,
          mainCpu / 1e9,
          request.getSerializedSize());
    }
  }

  /** The request from the plain values, as a caller holding them would build it. */
  private static RunSuiteRequest request(
      List<Map<String, Object>> records, List<Map<String, Object>> checks, boolean asJson) {
    RunSuiteRequest.Builder req = RunSuiteRequest.newBuilder();
    for (Map<String, Object> c : checks) {
      req.addChecks(Values.check((String) c.get("type"), (Map<?, ?>) c.get("params")));
    }
    for (Map<String, Object> r : records) {
      Sample.Builder s = Sample.newBuilder().setId((String) r.get("id"));
      if (asJson) {
        s.setInputJson(Values.json(r.get("input"))).setExpectedJson(Values.json(r.get("expected")));
      } else {
        s.setInput(Values.value(r.get("input"))).setExpected(Values.value(r.get("expected")));
      }
      req.addCases(Case.newBuilder().setSample(s).setOutput(Values.text((String) r.get("output"))));
    }
    return req.build();
  }

  private static List<Map<String, Object>> read(Gson gson, String path) throws IOException {
    String text = Files.readString(Path.of(path), StandardCharsets.UTF_8);
    return gson.fromJson(text, new TypeToken<List<Map<String, Object>>>() {}.getType());
  }
}
