package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.scorewire.v1.Case;
import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.CaseResultBatch;
import dev.scorewire.v1.CheckInfo;
import dev.scorewire.v1.ListChecksRequest;
import dev.scorewire.v1.ListChecksResponse;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSuiteResponse;
import dev.scorewire.v1.RunSuiteStreamRequest;
import dev.scorewire.v1.RunSuiteStreamResponse;
import dev.scorewire.v1.RunSummary;
import dev.scorewire.v1.Sample;
import dev.scorewire.v1.Score;
import dev.scorewire.v1.ScoreRequest;
import dev.scorewire.v1.ScoreResponse;
import dev.scorewire.v1.ScoreStreamRequest;
import dev.scorewire.v1.ScoreStreamResponse;
import dev.scorewire.v1.ScoringServiceGrpc;
import dev.scorewire.v1.StreamConfig;
import dev.scorewire.v1.ValidateSuiteRequest;
import dev.scorewire.v1.ValidateSuiteResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The default service config's retries, through a client built as a caller builds one
 * (its own channel, service config and {@code enableRetry()}) against a fake
 * ScoringService on 127.0.0.1 that refuses each method's first call and answers the next.
 */
@Timeout(30) // a retry that never comes would leave a call waiting, not failing
class RetryTest extends FakeServerTest<RetryTest.FlakyScoring> {
  @Override
  FlakyScoring newService() {
    return new FlakyScoring();
  }

  private static List<Case> cases(int n) {
    return IntStream.range(0, n)
        .mapToObj(i -> Case.newBuilder().setSample(Sample.newBuilder().setId("c" + i)).build())
        .toList();
  }

  @Test
  void scoreIsRetriedOnUnavailableAndReturnsTheSecondAnswer() {
    ScoreResponse r = client.score(ScoreRequest.newBuilder().addCompact("contains:x").build());
    assertEquals("call 2", r.getScores(0).getName());
    assertEquals(2, service.calls("Score"));
  }

  @Test
  void runSuiteIsRetriedOnUnavailable() {
    RunSuiteRequest request = RunSuiteRequest.newBuilder().addAllCases(cases(3)).build();
    try (SuiteRun run = client.runSuite(request)) {
      List<Integer> indexes = run.remaining().stream().map(CaseResult::getIndex).sorted().toList();
      assertEquals(List.of(0, 1, 2), indexes);
      assertEquals(3, run.summary().getCases());
    }
    assertEquals(2, service.calls("RunSuite"));
    assertEquals(0, service.calls("RunSuiteStream"));
  }

  @Test
  void runSuiteStreamIsRetriedWithTheConfigAndEveryChunkResent() {
    int n = ScorewireClient.STREAM_CHUNK_CASES + 1; // small cases: the whole call fits the retry buffer
    RunSuiteRequest request =
        RunSuiteRequest.newBuilder().addCompact("contains:x").addAllCases(cases(n)).build();
    try (SuiteRun run = client.runSuite(request)) {
      assertEquals(n, run.remaining().size());
      assertEquals(n, run.summary().getCases());
    }
    assertEquals(2, service.calls("RunSuiteStream"));
    assertEquals(0, service.calls("RunSuite"));
    assertEquals(2, service.streams.size());
    List<RunSuiteStreamRequest> second = service.streams.get(1);
    assertTrue(second.get(0).hasConfig());
    assertEquals(n, second.get(0).getConfig().getCaseCount());
    assertEquals(List.of("contains:x"), second.get(0).getConfig().getRequest().getCompactList());
    List<String> ids = new ArrayList<>();
    for (RunSuiteStreamRequest m : second.subList(1, second.size())) {
      assertTrue(m.hasCases());
      m.getCases().getCasesList().forEach(c -> ids.add(c.getSample().getId()));
    }
    assertEquals(cases(n).stream().map(c -> c.getSample().getId()).toList(), ids);
  }

  @Test
  void aRunSuiteStreamPastThePerCallRetryBufferIsNotRetried() {
    // 501 cases of 4 KiB outputs, 2 MiB in all: past perRpcBufferLimit (1 MiB), so gRPC
    // commits the call to its first attempt, and the refusal reaches the caller.
    String output = "x".repeat(4096);
    List<Case> big =
        cases(ScorewireClient.STREAM_CHUNK_CASES + 1).stream()
            .map(c -> c.toBuilder().setOutput(Values.text(output)).build())
            .toList();
    try (SuiteRun run = client.runSuite(RunSuiteRequest.newBuilder().addAllCases(big).build())) {
      ScorewireException e = assertThrows(ScorewireException.class, run::summary);
      assertEquals(Status.Code.UNAVAILABLE, e.code());
    }
    assertEquals(1, service.calls("RunSuiteStream"));
  }

  @Test
  void scoreStreamIsNeverRetried() {
    try (ScoreStream stream = client.scoreStream(StreamConfig.newBuilder().addCompact("contains:x").build())) {
      ScorewireException e = assertThrows(ScorewireException.class, stream::hasNext);
      assertEquals(Status.Code.UNAVAILABLE, e.code());
    }
    assertEquals(1, service.calls("ScoreStream"));
  }

  @Test
  void aCodeOtherThanUnavailableIsNotRetried() {
    service.firstCode = Status.Code.INVALID_ARGUMENT;
    ScorewireException e =
        assertThrows(
            ScorewireException.class,
            () -> client.score(ScoreRequest.newBuilder().addCompact("contains:x").build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertEquals(1, service.calls("Score"));
  }

  @Test
  void listChecksAndValidateSuiteAreRetriedOnUnavailable() {
    assertEquals("call 2", client.listChecks().getChecks(0).getType());
    assertEquals(2, service.calls("ListChecks"));
    ValidateSuiteResponse v =
        client.validateSuite(ValidateSuiteRequest.newBuilder().addCompact("contains:x").build());
    assertTrue(v.getValid());
    assertEquals(List.of("call 2"), v.getChecksList());
    assertEquals(2, service.calls("ValidateSuite"));
  }

  @Test
  void theRetriedMethodsAreTheIdempotentOnes() {
    @SuppressWarnings("unchecked")
    List<Map<String, ?>> methods = (List<Map<String, ?>>) ScorewireClient.serviceConfig().get("methodConfig");
    assertEquals(2, methods.size());
    assertEquals(
        List.of("Score", "RunSuite", "RunSuiteStream", "ListChecks", "ValidateSuite"),
        ((List<?>) methods.get(1).get("name"))
            .stream()
            .map(name -> ((Map<?, ?>) name).get("method"))
            .toList());
    assertFalse(methods.toString().contains("ScoreStream"));
  }

  /**
   * A ScoringService that fails each method's first call with {@link #firstCode} (before
   * any response, as a replica lost or a proxy's 502 would), and answers every later call;
   * a streaming call is refused once the client has sent everything.
   */
  static final class FlakyScoring extends ScoringServiceGrpc.ScoringServiceImplBase {
    volatile Status.Code firstCode = Status.Code.UNAVAILABLE;
    /** The messages each RunSuiteStream call received, in call order. */
    final List<List<RunSuiteStreamRequest>> streams = new CopyOnWriteArrayList<>();

    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    int calls(String method) {
      AtomicInteger n = calls.get(method);
      return n == null ? 0 : n.get();
    }

    /** Counts a call of {@code method}; returns its number, 1 for the first. */
    private int call(String method) {
      return calls.computeIfAbsent(method, m -> new AtomicInteger()).incrementAndGet();
    }

    /** Fails call number {@code call} with {@link #firstCode} if it is the first. */
    private boolean refused(int call, StreamObserver<?> out) {
      if (call > 1) {
        return false;
      }
      out.onError(firstCode.toStatus().withDescription("first call refused").asRuntimeException());
      return true;
    }

    @Override
    public void score(ScoreRequest request, StreamObserver<ScoreResponse> out) {
      int call = call("Score");
      if (refused(call, out)) {
        return;
      }
      out.onNext(
          ScoreResponse.newBuilder()
              .setPassed(true)
              .addScores(Score.newBuilder().setName("call " + call).setPassed(true).setValue(1))
              .build());
      out.onCompleted();
    }

    @Override
    public void runSuite(RunSuiteRequest request, StreamObserver<RunSuiteResponse> out) {
      if (refused(call("RunSuite"), out)) {
        return;
      }
      out.onNext(RunSuiteResponse.newBuilder().setResults(results(0, request.getCasesCount())).build());
      out.onNext(RunSuiteResponse.newBuilder().setSummary(summary(request.getCasesCount())).build());
      out.onCompleted();
    }

    @Override
    public StreamObserver<RunSuiteStreamRequest> runSuiteStream(
        StreamObserver<RunSuiteStreamResponse> out) {
      int call = call("RunSuiteStream");
      List<RunSuiteStreamRequest> received = new ArrayList<>();
      return new StreamObserver<>() {
        @Override
        public void onNext(RunSuiteStreamRequest message) {
          received.add(message);
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          streams.add(received);
          if (refused(call, out)) {
            return;
          }
          int n = 0;
          for (RunSuiteStreamRequest m : received) {
            if (m.hasCases()) {
              out.onNext(
                  RunSuiteStreamResponse.newBuilder()
                      .setResults(results(n, m.getCases().getCasesCount()))
                      .build());
              n += m.getCases().getCasesCount();
            }
          }
          out.onNext(RunSuiteStreamResponse.newBuilder().setSummary(summary(n)).build());
          out.onCompleted();
        }
      };
    }

    @Override
    public StreamObserver<ScoreStreamRequest> scoreStream(StreamObserver<ScoreStreamResponse> out) {
      int call = call("ScoreStream");
      return new StreamObserver<>() {
        @Override
        public void onNext(ScoreStreamRequest message) {
          // Refused on its config; a call retried anyway would end here without an error.
          if (message.hasConfig() && !refused(call, out)) {
            out.onCompleted();
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
      };
    }

    @Override
    public void listChecks(ListChecksRequest request, StreamObserver<ListChecksResponse> out) {
      int call = call("ListChecks");
      if (refused(call, out)) {
        return;
      }
      out.onNext(ListChecksResponse.newBuilder().addChecks(CheckInfo.newBuilder().setType("call " + call)).build());
      out.onCompleted();
    }

    @Override
    public void validateSuite(ValidateSuiteRequest request, StreamObserver<ValidateSuiteResponse> out) {
      int call = call("ValidateSuite");
      if (refused(call, out)) {
        return;
      }
      out.onNext(ValidateSuiteResponse.newBuilder().setValid(true).addChecks("call " + call).build());
      out.onCompleted();
    }

    private static CaseResultBatch results(int first, int count) {
      CaseResultBatch.Builder batch = CaseResultBatch.newBuilder();
      for (int i = first; i < first + count; i++) {
        batch.addResults(CaseResult.newBuilder().setIndex(i).setSampleId("c" + i).setPassed(true));
      }
      return batch.build();
    }

    private static RunSummary summary(int cases) {
      return RunSummary.newBuilder().setCases(cases).setCasesPassed(cases).setPassRate(1).build();
    }
  }
}
