package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.scorewire.v1.Case;
import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.CaseResultBatch;
import dev.scorewire.v1.CheckSummary;
import dev.scorewire.v1.Gate;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSuiteResponse;
import dev.scorewire.v1.RunSummary;
import dev.scorewire.v1.Sample;
import dev.scorewire.v1.ScoringServiceGrpc;
import dev.scorewire.v1.SuiteFormat;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ScorewireClient#runSuiteSharded}'s chunk-level retry, through a client built as
 * a caller builds one (gRPC's own retry on) against a fake ScoringService on 127.0.0.1
 * that fails chosen chunks' calls the ways a lost replica does: UNAVAILABLE more often
 * than gRPC's own retry tries, or a stream broken after some results, which gRPC never
 * retries. The live server never fails so, which is why these tests use a fake.
 */
@Timeout(30)
class ShardRetryTest extends FakeServerTest<ShardRetryTest.ChunkedScoring> {
  @Override
  ChunkedScoring newService() {
    return new ChunkedScoring();
  }

  private static RunSuiteRequest request(int n) {
    RunSuiteRequest.Builder r = RunSuiteRequest.newBuilder().addCompact("contains:x");
    IntStream.range(0, n).forEach(i -> r.addCases(Case.newBuilder().setSample(Sample.newBuilder().setId("c" + i))));
    return r.build();
  }

  private static void assertEachCaseOnce(int n, ShardedResult got) {
    assertEquals(IntStream.range(0, n).boxed().toList(), got.results().stream().map(CaseResult::getIndex).sorted().toList());
    got.results().forEach(r -> assertEquals("c" + r.getIndex(), r.getSampleId()));
    assertEquals(n, got.summary().getCases());
    assertEquals(n, got.summary().getCasesPassed());
  }

  @Test
  void aChunkRefusedPastGrpcsOwnRetryIsSentAgainWhole() {
    // gRPC's own retry makes 3 attempts; the chunk from c4 is refused 3 times, so gRPC
    // gives up and the shard sends it again (its 4th call).
    service.plan("c4", Failure.UNAVAILABLE, Failure.UNAVAILABLE, Failure.UNAVAILABLE);
    ShardedResult got = client.runSuiteSharded(request(12), ShardOptions.of(3));
    assertEachCaseOnce(12, got);
    assertEquals(1, got.retries());
    assertEquals(4, service.calls("c4"));
    assertEquals(1, service.calls("c0"));
    assertEquals(1, service.calls("c8"));
  }

  @Test
  void aStreamBrokenAfterItsFirstResultsIsSentAgainAndEachCaseCountedOnce() {
    // Results, then the transport's INTERNAL "RST_STREAM" or UNKNOWN "Stream removed"
    // (nginx, HAProxy): gRPC does not retry after a response; the shard does, and the
    // results of the broken attempt are not reported.
    service.plan("c0", Failure.RST_STREAM_AFTER_RESULTS);
    service.plan("c8", Failure.STREAM_REMOVED_AFTER_RESULTS);
    ShardedResult got = client.runSuiteSharded(request(12), ShardOptions.of(3));
    assertEachCaseOnce(12, got);
    assertEquals(2, got.retries());
    assertEquals(2, service.calls("c0"));
    assertEquals(1, service.calls("c4"));
    assertEquals(2, service.calls("c8"));
  }

  @Test
  void runIdsAreInTheOrderOfTheChunksCasesNotOfCompletion() {
    // The first chunk answers only after the other three: its run id still comes first.
    // The chunk from c3 is refused past gRPC's own retry; only its last attempt's run counts.
    service.holdUntilOthers("c0", 3);
    service.plan("c3", Failure.UNAVAILABLE, Failure.UNAVAILABLE, Failure.UNAVAILABLE);
    RunSuiteRequest recorded = request(12).toBuilder().setRecord(true).build();
    ShardedResult got = client.runSuiteSharded(recorded, ShardOptions.of(4));
    assertEachCaseOnce(12, got);
    assertEquals("c0", service.completed.get(service.completed.size() - 1), "c0's chunk was not the last: " + service.completed);
    assertEquals(List.of("run-c0-1", "run-c3-4", "run-c6-1", "run-c9-1"), got.runIds());
    assertEquals("", got.summary().getRunId());
    // Not recorded: the chunks' summaries name no run, and neither does the result.
    service.reset();
    assertEquals(List.of(), client.runSuiteSharded(request(12), ShardOptions.of(4)).runIds());
  }

  @Test
  void aChunkFailingEveryAttemptFailsTheRunAfterChunkAttempts() {
    service.plan("c0", Failure.RST_STREAM_AFTER_RESULTS, Failure.RST_STREAM_AFTER_RESULTS, Failure.RST_STREAM_AFTER_RESULTS);
    ScorewireException e =
        assertThrows(
            ScorewireException.class,
            () -> client.runSuiteSharded(request(12), ShardOptions.of(1).withChunkCases(4).withChunkAttempts(2)));
    assertEquals(Status.Code.INTERNAL, e.code());
    assertEquals(2, service.calls("c0"));
    assertEquals(0, service.calls("c4")); // the run stopped: no further chunk was sent
  }

  @Test
  void anyOtherErrorIsNotRetriedAndStopsTheRun() {
    for (Failure failure : List.of(Failure.INVALID_ARGUMENT, Failure.INTERNAL_OF_THE_SERVER)) {
      service.reset();
      service.plan("c0", failure);
      ScorewireException e =
          assertThrows(
              ScorewireException.class, () -> client.runSuiteSharded(request(12), ShardOptions.of(1).withChunkCases(4)));
      assertEquals(failure.status.getCode(), e.code(), failure.name());
      assertEquals(1, service.calls("c0"), failure.name());
      assertEquals(0, service.calls("c4"), failure.name());
    }
  }

  @Test
  void aFailedChunkCancelsTheOthersInFlight() throws Exception {
    // c4's chunk never answers; c0's is refused for good: the run fails at once and
    // cancels c4's call rather than waiting for it. c0's refusal waits until c4's call has
    // reached the server: refused any sooner, the run could end before c4's call was sent,
    // leaving no call to cancel (a busy machine made that happen).
    service.plan("c0", Failure.INVALID_ARGUMENT);
    service.plan("c4", Failure.HANG);
    service.failOnlyOnceAHangArrived();
    ScorewireException e =
        assertThrows(ScorewireException.class, () -> client.runSuiteSharded(request(8), ShardOptions.of(2)));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertTrue(service.cancelled.await(10, TimeUnit.SECONDS), "the hanging chunk's call was not cancelled");
  }

  @Test
  void theBudgetIsDividedAmongTheChunksInProportionToTheirCases() {
    client.runSuiteSharded(request(10).toBuilder().setBudgetUsd(1.0).build(), ShardOptions.of(3).withChunkCases(3));
    List<RunSuiteRequest> sent = service.requests.stream().sorted((a, b) -> id(a).compareTo(id(b))).toList();
    assertEquals(List.of("c0", "c3", "c6", "c9"), sent.stream().map(ShardRetryTest::id).toList());
    assertEquals(List.of(3, 3, 3, 1), sent.stream().map(RunSuiteRequest::getCasesCount).toList());
    double total = 0;
    for (RunSuiteRequest r : sent) {
      assertEquals(r.getCasesCount() / 10.0, r.getBudgetUsd(), 1e-15);
      assertEquals(List.of("contains:x"), r.getCompactList());
      total += r.getBudgetUsd();
    }
    assertEquals(1.0, total, 1e-12);
    // Without a budget, none is set on the chunks.
    service.reset();
    client.runSuiteSharded(request(10), ShardOptions.of(3));
    assertEquals(3, service.requests.size());
    service.requests.forEach(r -> assertFalse(r.hasBudgetUsd()));
  }

  @Test
  void aBatchIsSplitIntoAtLeastShardsChunksOfAtMostChunkCases() {
    RunSuiteRequest r = request(10);
    assertEquals(List.of(0, 3, 6, 9), Shards.split(r, ShardOptions.of(3).withChunkCases(3)).stream().map(Shards.Chunk::offset).toList());
    assertEquals(4, Shards.split(r, ShardOptions.of(4).withChunkCases(100)).size());
    assertEquals(10, Shards.split(r, ShardOptions.of(50)).size()); // never an empty chunk
    assertEquals(1, Shards.split(request(0), ShardOptions.of(3)).size());
    assertThrows(IllegalArgumentException.class, () -> ShardOptions.of(0));
  }

  @Test
  void aCheckllmBatchIsOneChunkSentAsItIs() {
    // The server scores a checkllm batch only with every combination present: split, each
    // chunk would lack some and be refused. So it is one chunk, its whole budget with it.
    RunSuiteRequest checkllm =
        request(10).toBuilder().setFormat(SuiteFormat.SUITE_FORMAT_CHECKLLM).setBudgetUsd(1).build();
    List<Shards.Chunk> chunks = Shards.split(checkllm, ShardOptions.of(3));
    assertEquals(1, chunks.size());
    assertEquals(0, chunks.get(0).offset());
    assertEquals(checkllm, chunks.get(0).request());
    // Format unspecified (detected from the document), one case naming its combination:
    // the batch is checkllm too, whichever of the three fields that case sets.
    for (int field = 0; field < 3; field++) {
      RunSuiteRequest.Builder named = request(10).toBuilder();
      Case.Builder c = named.getCases(4).toBuilder();
      switch (field) {
        case 0 -> c.setPrompt("0");
        case 1 -> c.setTest("France");
        default -> c.setProvider("openai:gpt-4o-mini");
      }
      RunSuiteRequest r = named.setCases(4, c).build();
      assertEquals(List.of(r), Shards.split(r, ShardOptions.of(3)).stream().map(Shards.Chunk::request).toList(), "field " + field);
    }
    // Plain cases, evalstone or unspecified, are still split.
    assertEquals(3, Shards.split(request(10), ShardOptions.of(3)).size());
    RunSuiteRequest evalstone = request(10).toBuilder().setFormat(SuiteFormat.SUITE_FORMAT_EVALSTONE).build();
    assertEquals(3, Shards.split(evalstone, ShardOptions.of(3)).size());
  }

  @Test
  void onlyLostReplicasAreRetried() {
    Map<ScorewireException, Boolean> cases =
        Map.of(
            failure(Status.Code.UNAVAILABLE, "connection refused"), true,
            failure(Status.Code.INTERNAL, "RST_STREAM closed stream. HTTP/2 error code: INTERNAL_ERROR"), true,
            failure(Status.Code.UNKNOWN, "Stream removed"), true,
            failure(Status.Code.INTERNAL, "server closed the stream without sending trailers"), true,
            failure(Status.Code.INTERNAL, "Received unexpected EOS on DATA frame from server"), true,
            failure(Status.Code.INTERNAL, "the stream ended without a summary"), true,
            failure(Status.Code.INTERNAL, "internal error"), false,
            failure(Status.Code.INVALID_ARGUMENT, "checks[0]"), false,
            failure(Status.Code.RESOURCE_EXHAUSTED, "max_cases_per_request"), false);
    cases.forEach((e, want) -> assertEquals(want, e.retryable(), e.getMessage()));
  }

  @Test
  void countsSumsAndCostsAdd() {
    // What the live server's checks leave at 0: judge calls cached, costs, unpriced.
    RunSummary a =
        RunSummary.newBuilder()
            .setCases(2).setPassed(1).setFailed(1).setValueSum(1).setCostUsd(0.25)
            .addChecks(CheckSummary.newBuilder().setName("j").setPassed(1).setFailed(1).setCached(1).setValueSum(1).setCostUsd(0.25))
            .build();
    RunSummary b =
        RunSummary.newBuilder()
            .setCases(1).setSkipped(1).setUnpriced(true)
            .addChecks(CheckSummary.newBuilder().setName("j").setSkipped(1).setCached(2))
            .build();
    RunSummary m = Summaries.merge(List.of(a, b));
    assertEquals(3, m.getCases());
    assertEquals(1, m.getSkipped());
    assertEquals(0.25, m.getCostUsd());
    assertTrue(m.getUnpriced());
    assertEquals(0.5, m.getMeanScore());
    CheckSummary j = m.getChecks(0);
    assertEquals(List.of(1L, 1L, 0L, 1L, 3L), List.of(j.getPassed(), j.getFailed(), j.getErrored(), j.getSkipped(), j.getCached()));
    assertEquals(0.25, j.getCostUsd());
    assertEquals(0.5, j.getMeanValue());
  }

  @Test
  void summariesOfDifferentChecksDoNotMerge() {
    RunSummary a = RunSummary.newBuilder().addChecks(CheckSummary.newBuilder().setName("a")).build();
    RunSummary b = RunSummary.newBuilder().addChecks(CheckSummary.newBuilder().setName("b")).build();
    assertThrows(IllegalArgumentException.class, () -> Summaries.merge(List.of(a, b)));
    assertThrows(IllegalArgumentException.class, () -> Summaries.merge(List.of()));
  }

  @Test
  void numbersInGateReasonsAreFormattedAsPythonDoes() {
    // Python's f"{x:.4g}" and f"{x:g}", which the server's sentences use.
    assertEquals("0.366", Summaries.g(0.36597938144329895, 4));
    assertEquals("0.5", Summaries.g(0.5, 4));
    assertEquals("0", Summaries.g(0, 6));
    assertEquals("0.6", Summaries.g(0.6, 6));
    assertEquals("0.123457", Summaries.g(0.1234567, 6));
    assertEquals("1.235e+06", Summaries.g(1234567, 4));
    assertEquals("1.23457e+06", Summaries.g(1234567, 6));
    assertEquals("1e+05", Summaries.g(100000, 4));
    assertEquals("100000", Summaries.g(100000, 6));
    assertEquals("1e-05", Summaries.g(1e-5, 6));
    assertEquals("0.0001", Summaries.g(1e-4, 6));
    assertEquals("10", Summaries.g(9.99996, 4));
    RunSummary s = RunSummary.newBuilder().setCases(1).setCostUsd(0.123456789).build();
    assertEquals(
        List.of("cost $0.1235 is above max_cost $0.1"),
        Summaries.gateReasons(Gate.newBuilder().setMaxCostUsd(0.1).build(), s));
  }

  private static ScorewireException failure(Status.Code code, String message) {
    return new ScorewireException(code, message, List.of(), null);
  }

  private static String id(RunSuiteRequest r) {
    return r.getCasesCount() == 0 ? "" : r.getCases(0).getSample().getId();
  }

  /** How one call of a chunk fails. */
  enum Failure {
    UNAVAILABLE(Status.UNAVAILABLE.withDescription("replica lost"), false),
    RST_STREAM_AFTER_RESULTS(Status.INTERNAL.withDescription("Received RST_STREAM with error code 2"), true),
    STREAM_REMOVED_AFTER_RESULTS(Status.UNKNOWN.withDescription("Stream removed"), true),
    INVALID_ARGUMENT(Status.INVALID_ARGUMENT.withDescription("checks[0]: unknown parameter"), false),
    INTERNAL_OF_THE_SERVER(Status.INTERNAL.withDescription("internal error"), true),
    HANG(null, false);

    final Status status;
    final boolean afterResults;

    Failure(Status status, boolean afterResults) {
      this.status = status;
      this.afterResults = afterResults;
    }
  }

  /**
   * A ScoringService whose RunSuite answers every case passed and a summary counting them,
   * except the calls {@link #plan}ned to fail; a chunk is named by its first case's id.
   */
  static final class ChunkedScoring extends ScoringServiceGrpc.ScoringServiceImplBase {
    /** Every RunSuite request answered in full. */
    final List<RunSuiteRequest> requests = new CopyOnWriteArrayList<>();
    /** Counted down when a {@link Failure#HANG}ing call is cancelled by the client. */
    final CountDownLatch cancelled = new CountDownLatch(1);
    /** Counted down when a {@link Failure#HANG}ing call has arrived. */
    private final CountDownLatch hung = new CountDownLatch(1);
    private volatile boolean failAfterHang;

    /** Planned failures other than HANG are answered only once a HANG call has arrived. */
    void failOnlyOnceAHangArrived() {
      failAfterHang = true;
    }

    /** Chunks (by first case id) in the order their calls completed. */
    final List<String> completed = new CopyOnWriteArrayList<>();
    /** Each held chunk answers only once {@link #others} have completed. */
    private final Map<String, CountDownLatch> held = new ConcurrentHashMap<>();
    private volatile CountDownLatch others = new CountDownLatch(0);

    private final Map<String, Deque<Failure>> plans = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    /** The next calls of the chunk from case {@code id} fail so, one each, in order. */
    void plan(String id, Failure... failures) {
      plans.computeIfAbsent(id, k -> new ArrayDeque<>()).addAll(List.of(failures));
    }

    /** The chunk from case {@code id} answers only after {@code n} other calls completed. */
    void holdUntilOthers(String id, int n) {
      others = new CountDownLatch(n);
      held.put(id, others);
    }

    void reset() {
      held.clear();
      completed.clear();
      plans.clear();
      calls.clear();
      requests.clear();
    }

    int calls(String id) {
      AtomicInteger n = calls.get(id);
      return n == null ? 0 : n.get();
    }

    @Override
    public void runSuite(RunSuiteRequest request, StreamObserver<RunSuiteResponse> out) {
      String id = id(request);
      calls.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
      Deque<Failure> plan = plans.get(id);
      Failure failure;
      synchronized (this) {
        failure = plan == null ? null : plan.poll();
      }
      int n = request.getCasesCount();
      CountDownLatch wait = held.get(id);
      if (wait != null) {
        try {
          wait.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (failure == Failure.HANG) {
        ((ServerCallStreamObserver<RunSuiteResponse>) out).setOnCancelHandler(cancelled::countDown);
        hung.countDown();
        return;
      }
      if (failure != null && failAfterHang) {
        try {
          hung.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (failure == null || failure.afterResults) {
        CaseResultBatch.Builder batch = CaseResultBatch.newBuilder();
        for (int i = 0; i < n; i++) {
          batch.addResults(CaseResult.newBuilder().setIndex(i).setSampleId(request.getCases(i).getSample().getId()).setPassed(true));
        }
        out.onNext(RunSuiteResponse.newBuilder().setResults(batch).build());
      }
      if (failure != null) {
        out.onError(failure.status.asRuntimeException());
        return;
      }
      requests.add(request);
      RunSummary.Builder summary = RunSummary.newBuilder().setCases(n).setCasesPassed(n).setPassRate(n == 0 ? 0 : 1);
      if (request.getRecord()) {
        // Named by the chunk and its call count: a retried chunk's is its last attempt's.
        summary.setRunId("run-" + id + "-" + calls(id));
      }
      out.onNext(RunSuiteResponse.newBuilder().setSummary(summary).build());
      out.onCompleted();
      completed.add(id);
      if (wait == null) {
        others.countDown();
      }
    }
  }
}
