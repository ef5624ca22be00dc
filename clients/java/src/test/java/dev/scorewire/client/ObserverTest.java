package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.scorewire.v1.ListRunResultsRequest;
import dev.scorewire.v1.ListRunResultsResponse;
import dev.scorewire.v1.ListRunsRequest;
import dev.scorewire.v1.Observation;
import dev.scorewire.v1.ObservationMetadata;
import dev.scorewire.v1.Run;
import dev.scorewire.v1.RunCaseResult;
import dev.scorewire.v1.Sample;
import dev.scorewire.v1.TraceContext;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The Observer against a real scorewire server (its rule: tests/clients/observe_rules.yaml), and
 * against an address nothing listens on.
 */
class ObserverTest extends LiveServerTest {
  private static Observation observation(String id, String text) {
    return Observation.newBuilder()
        .setObservationId(id)
        .setSample(Sample.newBuilder().setInput(Values.value("capital of France?")))
        .setOutput(Values.text(text))
        .setTrace(
            TraceContext.newBuilder()
                .setTraceId(UUID.randomUUID().toString().replace("-", ""))
                .setSpanId("00f067aa0ba902b7"))
        .setMetadata(ObservationMetadata.newBuilder().setRoute("/java-test").putLabels("env", "test"))
        .build();
  }

  /** Sample id to passed, for every observation the rule {@code clients} has scored. */
  private static Map<String, Boolean> scored() {
    Map<String, Boolean> seen = new HashMap<>();
    for (Run run :
        client.listRuns(ListRunsRequest.newBuilder().putLabels("observe_rule", "clients").build()).getRunsList()) {
      String token = "";
      do {
        ListRunResultsResponse page =
            client.listRunResults(
                ListRunResultsRequest.newBuilder()
                    .setRunId(run.getRunId())
                    .setPageSize(1000)
                    .setPageToken(token)
                    .build());
        for (RunCaseResult r : page.getResultsList()) {
          seen.put(r.getResult().getSampleId(), r.getResult().getPassed());
        }
        token = page.getNextPageToken();
      } while (!token.isEmpty());
    }
    return seen;
  }

  /** A client of an address nothing listens on: a port just closed. */
  private static ScorewireClient unreachable() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    return ScorewireClient.newBuilder("127.0.0.1:" + port).build();
  }

  @Test
  void observationsArriveAndAreScored() throws Exception {
    Map<String, Boolean> want = Map.of("java-" + UUID.randomUUID(), true, "java-" + UUID.randomUUID(), false);
    try (Observer observer =
        client.observer(ObserverOptions.defaults().withFlushInterval(Duration.ofMillis(50)))) {
      want.forEach((id, pass) -> assertTrue(observer.observe(observation(id, pass ? "Paris" : "Lyon"))));
      assertTrue(observer.flush(Duration.ofSeconds(20)));
      Observer.Stats stats = observer.stats();
      assertEquals(2, stats.queued(), stats.toString());
      assertEquals(0, stats.buffered());
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (true) {
      Map<String, Boolean> seen = scored();
      if (seen.keySet().containsAll(want.keySet())) {
        want.forEach((id, pass) -> assertEquals(pass, seen.get(id), id));
        return;
      }
      assertTrue(System.nanoTime() < deadline, "observations not scored within 20 s");
      Thread.sleep(100);
    }
  }

  @Test
  void aFullBufferDropsAndCountsInsteadOfBlocking() throws Exception {
    try (ScorewireClient down = unreachable()) {
      Observer observer =
          down.observer(
              ObserverOptions.defaults()
                  .withBufferSize(10)
                  .withBatchSize(5)
                  .withFlushInterval(Duration.ofMillis(10))
                  .withRetries(1000, Duration.ofMillis(10), Duration.ofMillis(50)));
      int taken = 0;
      long slowest = 0;
      for (int i = 0; i < 200; i++) {
        long start = System.nanoTime();
        if (observer.observe(observation("o" + i, "Paris"))) {
          taken++;
        }
        slowest = Math.max(slowest, System.nanoTime() - start);
        if (i % 50 == 0) {
          Thread.sleep(20); // the sender tries, and fails
        }
      }
      Observer.Stats stats = observer.stats();
      assertEquals(10, taken);
      assertEquals(10, stats.accepted());
      assertEquals(190, stats.dropped().get(Observer.DropReason.BUFFER_FULL));
      assertTrue(stats.retries() > 0, stats.toString());
      // Far above a busy machine's scheduling hiccups, far below a call waiting on retries.
      assertTrue(slowest < Duration.ofMillis(250).toNanos(), "slowest observe " + slowest + " ns");
      long start = System.nanoTime();
      assertFalse(observer.close(Duration.ofMillis(200)));
      assertTrue(System.nanoTime() - start < Duration.ofSeconds(2).toNanos(), "close overran its deadline");
      stats = observer.stats();
      assertEquals(10, stats.dropped().get(Observer.DropReason.CLOSED));
      assertEquals(0, stats.buffered());
      assertFalse(observer.observe(observation("late", "Paris")));
    }
  }

  @Test
  void retriesAreBounded() throws Exception {
    try (ScorewireClient down = unreachable();
        Observer observer =
            down.observer(ObserverOptions.defaults().withRetries(3, Duration.ofMillis(1), Duration.ofMillis(1)))) {
      observer.observe(observation("once", "Paris"));
      assertTrue(observer.flush(Duration.ofSeconds(10)));
      Observer.Stats stats = observer.stats();
      assertEquals(1, stats.dropped().get(Observer.DropReason.RETRIES_EXHAUSTED));
      assertEquals(2, stats.retries());
    }
  }

  @Test
  void whatTheServerRefusesIsDroppedNotRetriedAndTheRestOfItsBatchSent() {
    Observer observer = client.observer();
    Observation tooLong = observation("java-" + UUID.randomUUID(), "Paris");
    observer.observe(
        tooLong.toBuilder().setMetadata(ObservationMetadata.newBuilder().setRoute("r".repeat(1000))).build());
    observer.observe(observation("java-" + UUID.randomUUID(), "Paris")); // the same batch, good
    assertFalse(
        observer.observe(
            Observation.newBuilder().setTrace(TraceContext.newBuilder().setTraceId("not-hex")).build()));
    assertFalse(observer.observe(null));
    assertTrue(observer.close(Duration.ofSeconds(20)));
    Observer.Stats stats = observer.stats();
    assertEquals(1, stats.dropped().get(Observer.DropReason.REJECTED));
    assertEquals(1, stats.queued()); // the rest of the refused batch, sent again
    assertEquals(2, stats.dropped().get(Observer.DropReason.INVALID));
    assertEquals(0, stats.retries());
  }

  @Test
  void closeFlushes() {
    Observer observer =
        client.observer(ObserverOptions.defaults().withFlushInterval(Duration.ofHours(1)).withBatchSize(1000));
    for (int i = 0; i < 5; i++) {
      observer.observe(observation("java-" + UUID.randomUUID(), "Paris"));
    }
    assertTrue(observer.close(Duration.ofSeconds(20)));
    Observer.Stats stats = observer.stats();
    assertEquals(5, stats.queued());
    assertEquals(0, stats.buffered());
  }
}
