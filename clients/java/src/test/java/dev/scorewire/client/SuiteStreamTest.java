package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.scorewire.v1.Case;
import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSuiteResponse;
import dev.scorewire.v1.RunSummary;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * runSuite's two paths against a real server: a batch over {@link
 * ScorewireClient#STREAM_CHUNK_CASES} cases goes as a RunSuiteStream and answers (and
 * fails) as one RunSuite would; each test's client records the methods it calls and the
 * status each call ends with.
 */
@Timeout(60) // a flow-control bug would stall the stream, not fail it
class SuiteStreamTest extends LiveServerTest {
  private static final String RUN_SUITE = "scorewire.v1.ScoringService/RunSuite";
  private static final String RUN_SUITE_STREAM = "scorewire.v1.ScoringService/RunSuiteStream";

  private final List<String> methods = new CopyOnWriteArrayList<>();
  private final BlockingQueue<Status.Code> closed = new LinkedBlockingQueue<>();
  private ManagedChannel channel;
  private ScorewireClient recorded;

  @BeforeEach
  void recordingClient() {
    ClientInterceptor record =
        new ClientInterceptor() {
          @Override
          public <Q, R> ClientCall<Q, R> interceptCall(
              MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            methods.add(method.getFullMethodName());
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
              @Override
              public void start(Listener<R> listener, Metadata headers) {
                super.start(
                    new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                      @Override
                      public void onClose(Status status, Metadata trailers) {
                        closed.add(status.getCode());
                        super.onClose(status, trailers);
                      }
                    },
                    headers);
              }
            };
          }
        };
    channel = ManagedChannelBuilder.forTarget(server.address).usePlaintext().intercept(record).build();
    recorded = ScorewireClient.newBuilder(server.address).channel(channel).build();
  }

  @AfterEach
  void closeChannel() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private static RunSuiteRequest request(List<Case> cases) {
    return RunSuiteRequest.newBuilder().addCompact("contains:Northstar").addAllCases(cases).build();
  }

  /** The summary of {@code request} as one RunSuite, through the generated stub. */
  private static RunSummary oneRunSuite(RunSuiteRequest request) {
    RunSummary summary = null;
    Iterator<RunSuiteResponse> responses = client.blockingStub().runSuite(request);
    while (responses.hasNext()) {
      RunSuiteResponse response = responses.next();
      if (response.hasSummary()) {
        summary = response.getSummary();
      }
    }
    return summary;
  }

  /** {@code n} cases whose case {@code bad} sets both forms of its expected value. */
  private static List<Case> withBadCase(int n, int bad) {
    List<Case> cases = new ArrayList<>(ScorewireClientTest.cases(n));
    Case c = cases.get(bad);
    cases.set(
        bad,
        c.toBuilder()
            .setSample(
                c.getSample().toBuilder()
                    .setExpected(Values.value("Northstar"))
                    .setExpectedJson(Values.json("Northstar")))
            .build());
    return cases;
  }

  @Test
  void aBatchOverOneChunkStreamsAndAnswersAsOneRunSuite() {
    int n = 1200; // two full chunks and a partial one
    RunSuiteRequest request = request(ScorewireClientTest.cases(n));
    Map<Integer, CaseResult> seen = new HashMap<>();
    RunSummary summary;
    try (SuiteRun run = recorded.runSuite(request)) {
      for (CaseResult result : run) {
        assertNull(seen.put(result.getIndex(), result), "case " + result.getIndex() + " arrived twice");
        assertEquals("case-" + result.getIndex(), result.getSampleId());
        assertEquals(result.getIndex() % 2 == 0, result.getPassed(), "case " + result.getIndex());
      }
      summary = run.summary();
    }
    assertEquals(List.of(RUN_SUITE_STREAM), methods);
    assertEquals(IntStream.range(0, n).boxed().toList(), new ArrayList<>(new TreeSet<>(seen.keySet())));
    assertEquals(n, summary.getCases());
    assertEquals(n / 2, summary.getCasesPassed());
    // Field for field what the same cases give as one RunSuite.
    assertEquals(oneRunSuite(request), summary);
  }

  @Test
  void aBatchOfOneChunkStillGoesAsOneRunSuite() {
    int n = ScorewireClient.STREAM_CHUNK_CASES;
    try (SuiteRun run = recorded.runSuite(request(ScorewireClientTest.cases(n)))) {
      assertEquals(n, run.remaining().size());
      assertEquals(n, run.summary().getCases());
    }
    assertEquals(List.of(RUN_SUITE), methods);
  }

  @Test
  void aBadCaseInALateChunkFailsAsInRunSuiteNamingItsIndex() {
    RunSuiteRequest request = request(withBadCase(1200, 1100));
    ScorewireException e;
    try (SuiteRun run = recorded.runSuite(request)) {
      e = assertThrows(ScorewireException.class, run::summary);
    }
    assertEquals(List.of(RUN_SUITE_STREAM), methods);
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code(), e.getMessage());
    assertTrue(
        e.fieldViolations().stream().anyMatch(v -> v.field().equals("cases[1100].sample.expected_json")),
        e.fieldViolations().toString());
    // The same code and violations as the same cases in one RunSuite.
    StatusRuntimeException direct =
        assertThrows(StatusRuntimeException.class, () -> oneRunSuite(request));
    assertEquals(direct.getStatus().getCode(), e.code());
    assertEquals(ScorewireException.violationsOf(direct), e.fieldViolations());
    // The client goes on.
    assertEquals(3, recorded.runSuite(request(ScorewireClientTest.cases(3))).summary().getCases());
  }

  @Test
  void aBatchOverTheServersCaseLimitIsResourceExhausted() {
    // 100,000 is the server's default max_cases_per_request, which the test servers keep.
    RunSuiteRequest request = request(ScorewireClientTest.cases(100_001));
    try (SuiteRun run = recorded.runSuite(request)) {
      ScorewireException e = assertThrows(ScorewireException.class, run::hasNext);
      assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.code(), e.getMessage());
      assertTrue(e.description().contains("max_cases_per_request"), e.description());
    }
    assertEquals(List.of(RUN_SUITE_STREAM), methods);
  }

  @Test
  void closingAStreamedRunWhileItsCasesAreStillSentCancelsIt() throws InterruptedException {
    SuiteRun run = recorded.runSuite(request(ScorewireClientTest.cases(20_000)));
    run.close();
    ScorewireException e = assertThrows(ScorewireException.class, run::summary);
    assertEquals(Status.Code.CANCELLED, e.code(), e.getMessage());
    // The call itself ended so, not just the run's view of it.
    assertEquals(Status.Code.CANCELLED, closed.poll(10, TimeUnit.SECONDS));
    // The client goes on.
    assertEquals(600, recorded.runSuite(request(ScorewireClientTest.cases(600))).summary().getCases());
    assertEquals(List.of(RUN_SUITE_STREAM, RUN_SUITE_STREAM), methods);
  }

  @Test
  void aDeadlineFailsEitherPathWithDeadlineExceeded() {
    // 20,000 cases cannot be sent, scored and streamed back within 50 ms, nor 500 in 1 ms.
    try (SuiteRun run = recorded.runSuite(request(ScorewireClientTest.cases(20_000)), Duration.ofMillis(50))) {
      ScorewireException e = assertThrows(ScorewireException.class, run::summary);
      assertEquals(Status.Code.DEADLINE_EXCEEDED, e.code(), e.getMessage());
    }
    try (SuiteRun run = recorded.runSuite(request(ScorewireClientTest.cases(500)), Duration.ofMillis(1))) {
      ScorewireException e = assertThrows(ScorewireException.class, run::summary);
      assertEquals(Status.Code.DEADLINE_EXCEEDED, e.code(), e.getMessage());
    }
    assertEquals(List.of(RUN_SUITE_STREAM, RUN_SUITE), methods);
  }
}
