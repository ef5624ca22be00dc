package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.scorewire.v1.Case;
import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.CompareRunsResponse;
import dev.scorewire.v1.Label;
import dev.scorewire.v1.ListLabelsRequest;
import dev.scorewire.v1.ListRunResultsRequest;
import dev.scorewire.v1.ListRunsRequest;
import dev.scorewire.v1.PutLabelsRequest;
import dev.scorewire.v1.Run;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSummary;
import dev.scorewire.v1.Score;
import dev.scorewire.v1.ScoreRequest;
import dev.scorewire.v1.ScoreResponse;
import dev.scorewire.v1.ValidateSuiteRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The asynchronous form ({@link ScorewireAsyncClient}) against a real scorewire server. */
class AsyncClientTest extends LiveServerTest {
  private static final long WAIT_S = 60;

  private static ScoreRequest scoreRequest(String output, Map<String, ?> lengthParams) {
    return ScoreRequest.newBuilder()
        .setOutput(Values.text(output))
        .addChecks(Values.check("contains", Map.of("needles", List.of("Northstar"))))
        .addChecks(Values.check("output_length", lengthParams))
        .build();
  }

  /** The future's value, failing the test if it takes longer than {@link #WAIT_S}. */
  private static <T> T await(CompletableFuture<T> future) throws Exception {
    return future.get(WAIT_S, TimeUnit.SECONDS);
  }

  /** What {@code future} failed with, as {@code get()} reports it (the cause it wraps). */
  private static Throwable failureOf(CompletableFuture<?> future) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(WAIT_S, TimeUnit.SECONDS));
    return e.getCause();
  }

  /** Asserts the two failures are the same: type, code, description and violations. */
  private static void assertSameFailure(ScorewireException blocking, Throwable async) {
    ScorewireException e = assertInstanceOf(ScorewireException.class, async);
    assertEquals(blocking.code(), e.code());
    assertEquals(blocking.getMessage(), e.getMessage());
    assertEquals(blocking.description(), e.description());
    assertEquals(blocking.fieldViolations(), e.fieldViolations());
  }

  private static List<String> verdicts(ScoreResponse response) {
    return response.getScoresList().stream()
        .map(s -> s.getName() + " " + s.getPassed() + " " + s.getValue())
        .toList();
  }

  @Test
  void scoreCompletesWithWhatTheBlockingCallReturns() throws Exception {
    ScoreRequest request = scoreRequest("Northstar ships it.", Map.of("maximum", 5));
    ScoreResponse async = await(client.async().score(request));
    // Latencies differ from call to call; names, verdicts and values do not.
    assertEquals(verdicts(client.score(request)), verdicts(async));
    assertEquals(List.of("contains true 1.0", "output_length false 0.0"), verdicts(async));
    assertFalse(async.getPassed());
  }

  @Test
  void badInputFailsTheFutureWithTheBlockingCallsException() {
    // A misspelt parameter: INVALID_ARGUMENT naming checks[1].params.maximun.
    ScoreRequest request = scoreRequest("Northstar", Map.of("maximun", 5));
    ScorewireException blocking = assertThrows(ScorewireException.class, () -> client.score(request));
    assertEquals(Status.Code.INVALID_ARGUMENT, blocking.code());
    assertTrue(
        blocking.fieldViolations().stream().anyMatch(v -> v.field().equals("checks[1].params.maximun")),
        blocking.fieldViolations().toString());
    CompletableFuture<ScoreResponse> future = client.async().score(request);
    assertSameFailure(blocking, failureOf(future));
    // join() reports the same exception, wrapped as CompletableFuture wraps any.
    assertSameFailure(blocking, assertThrows(CompletionException.class, future::join).getCause());
  }

  @Test
  void runSuiteCollectsEveryResultOnceAndTheSummary() throws Exception {
    for (int n : new int[] {10, ScorewireClient.STREAM_CHUNK_CASES * 2 + 1}) { // RunSuite, RunSuiteStream
      RunSuiteRequest request =
          RunSuiteRequest.newBuilder()
              .addCompact("contains:Northstar")
              .addAllCases(ScorewireClientTest.cases(n))
              .build();
      SuiteResult run = await(client.async().runSuite(request));
      List<Integer> indexes = run.results().stream().map(CaseResult::getIndex).sorted().toList();
      assertEquals(IntStream.range(0, n).boxed().toList(), indexes, n + " cases");
      long passed = run.results().stream().filter(CaseResult::getPassed).count();
      assertEquals((n + 1) / 2, passed, "even indexes mention Northstar");
      RunSummary summary = run.summary();
      assertEquals(n, summary.getCases());
      assertEquals(passed, summary.getCasesPassed());
    }
  }

  @Test
  void runSuiteBadInputFailsAsTheBlockingRunDoes() {
    for (int n : new int[] {3, ScorewireClient.STREAM_CHUNK_CASES + 1}) { // RunSuite, RunSuiteStream
      RunSuiteRequest request =
          RunSuiteRequest.newBuilder()
              .addChecks(Values.check("length", Map.of("max_wrds", 3)))
              .addAllCases(ScorewireClientTest.cases(n))
              .build();
      ScorewireException blocking;
      try (SuiteRun run = client.runSuite(request)) {
        blocking = assertThrows(ScorewireException.class, run::summary);
      }
      assertEquals(Status.Code.INVALID_ARGUMENT, blocking.code());
      assertSameFailure(blocking, failureOf(client.async().runSuite(request)));
    }
  }

  @Test
  void theOtherUnaryCallsAnswerAsTheBlockingOnes() throws Exception {
    assertEquals(client.listChecks(), await(client.async().listChecks()));
    ValidateSuiteRequest validate =
        ValidateSuiteRequest.newBuilder().addChecks(Values.check("no_such_check", null)).build();
    assertEquals(client.validateSuite(validate), await(client.async().validateSuite(validate)));

    String sample = "async-" + UUID.randomUUID();
    Label label =
        Label.newBuilder()
            .setSampleId(sample)
            .setOutputHash(ScorewireClient.outputHash("Northstar"))
            .setPassed(true)
            .setLabeller("ann")
            .build();
    // Without a request id, the call gets a fresh one, as the blocking call does.
    assertEquals(1, await(client.async().putLabels(PutLabelsRequest.newBuilder().addLabels(label).build())).getLabelsCount());
    ListLabelsRequest list = ListLabelsRequest.newBuilder().setSampleId(sample).build();
    assertEquals(client.listLabels(list), await(client.async().listLabels(list)));
    assertEquals(1, client.listLabels(list).getLabelsCount());
  }

  @Test
  void recordedRunsReadBackCompareAndDelete() throws Exception {
    String name = "java-async-runs-" + UUID.randomUUID();
    Supplier<RunSuiteRequest.Builder> recorded =
        () -> RunSuiteRequest.newBuilder().addCompact("contains:Northstar").setRecord(true).setRunName(name);
    List<Case> cases = ScorewireClientTest.cases(4);
    String base = await(client.async().runSuite(recorded.get().addAllCases(cases).build())).summary().getRunId();
    List<Case> worse = new java.util.ArrayList<>(cases);
    worse.set(0, worse.get(0).toBuilder().setOutput(Values.text("nobody")).build()); // case-0 regresses
    String now = await(client.async().runSuite(recorded.get().addAllCases(worse).build())).summary().getRunId();

    Run run = await(client.async().getRun(now));
    assertEquals(client.getRun(now), run);
    assertEquals(4, run.getResults());
    ListRunsRequest byName = ListRunsRequest.newBuilder().setName(name).build();
    assertEquals(List.of(now, base), await(client.async().listRuns(byName)).getRunsList().stream().map(Run::getRunId).toList());
    ListRunResultsRequest results = ListRunResultsRequest.newBuilder().setRunId(now).build();
    assertEquals(client.listRunResults(results), await(client.async().listRunResults(results)));
    CompareRunsResponse compared = await(client.async().compareRuns(base, now));
    assertEquals(List.of("case-0"), compared.getRegressedList().stream().map(c -> c.getSampleId()).toList());

    assertEquals(null, await(client.async().deleteRun(now)));
    ScorewireException blocking = assertThrows(ScorewireException.class, () -> client.getRun(now));
    assertEquals(Status.Code.NOT_FOUND, blocking.code());
    assertSameFailure(blocking, failureOf(client.async().getRun(now)));
    client.deleteRun(base);
  }

  @Test
  void cancellingARunCancelsItsCallOnTheServer() throws Exception {
    // 50,000 cases (a RunSuiteStream) and four checks: the first results arrive well
    // before the last (on a quiet machine ~0.2 s, then ~0.7 s more), and the future is
    // cancelled then, mid-run.
    RunSuiteRequest request =
        RunSuiteRequest.newBuilder()
            .addAllCompact(List.of("contains:Northstar", "length:1..100", "regex:ships?", "json_valid"))
            .addAllCases(ScorewireClientTest.cases(50_000))
            .build();
    CallRecorder recorder = new CallRecorder();
    ManagedChannel channel =
        Grpc.newChannelBuilder(server.address, InsecureChannelCredentials.create()).intercept(recorder).build();
    try (ScorewireClient own = ScorewireClient.newBuilder(server.address).channel(channel).build()) {
      CompletableFuture<SuiteResult> future = own.async().runSuite(request);
      recorder.firstMessage.get(WAIT_S, TimeUnit.SECONDS);
      assertTrue(future.cancel(true), "the run had already finished");
      assertTrue(future.isCancelled());
      assertThrows(CancellationException.class, future::join);
      // The call itself ended CANCELLED: the client reset the stream, so the server stops.
      assertEquals(Status.Code.CANCELLED, recorder.closed.get(WAIT_S, TimeUnit.SECONDS).getCode());
      // The channel serves the next call.
      assertTrue(await(own.async().score(scoreRequest("Northstar", Map.of("maximum", 50)))).getPassed());
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** Records when the first call through it received its first message, and how it closed. */
  private static final class CallRecorder implements ClientInterceptor {
    final CompletableFuture<Void> firstMessage = new CompletableFuture<>();
    final CompletableFuture<Status> closed = new CompletableFuture<>();

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          super.start(
              new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                @Override
                public void onMessage(R message) {
                  firstMessage.complete(null);
                  super.onMessage(message);
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                  closed.complete(status);
                  super.onClose(status, trailers);
                }
              },
              headers);
        }
      };
    }
  }
}
