package dev.scorewire.client;

import dev.scorewire.v1.CancelJobRequest;
import dev.scorewire.v1.Case;
import dev.scorewire.v1.CloseRunRequest;
import dev.scorewire.v1.CompareRunsRequest;
import dev.scorewire.v1.CompareRunsResponse;
import dev.scorewire.v1.DeleteRunRequest;
import dev.scorewire.v1.GetJobRequest;
import dev.scorewire.v1.GetRunRequest;
import dev.scorewire.v1.Job;
import dev.scorewire.v1.JobConfig;
import dev.scorewire.v1.JobServiceGrpc;
import dev.scorewire.v1.JobState;
import dev.scorewire.v1.LabelServiceGrpc;
import dev.scorewire.v1.ListChecksRequest;
import dev.scorewire.v1.ListChecksResponse;
import dev.scorewire.v1.ListJobsRequest;
import dev.scorewire.v1.ListLabelsRequest;
import dev.scorewire.v1.ListLabelsResponse;
import dev.scorewire.v1.ListRunResultsRequest;
import dev.scorewire.v1.ListRunResultsResponse;
import dev.scorewire.v1.ListRunsRequest;
import dev.scorewire.v1.ListRunsResponse;
import dev.scorewire.v1.OpenRunRequest;
import dev.scorewire.v1.PutLabelsRequest;
import dev.scorewire.v1.PutLabelsResponse;
import dev.scorewire.v1.Run;
import dev.scorewire.v1.RunServiceGrpc;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.ScoreRequest;
import dev.scorewire.v1.ScoreResponse;
import dev.scorewire.v1.ScoringServiceGrpc;
import dev.scorewire.v1.StreamConfig;
import dev.scorewire.v1.ValidateSuiteRequest;
import dev.scorewire.v1.ValidateSuiteResponse;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A client of {@code scorewire.v1.ScoringService}, {@code LabelService}, {@code
 * RunService} and {@code JobService}: the generated grpc-java stubs with defaults (deadlines, keepalive,
 * round-robin over DNS), and failures as {@link ScorewireException}.
 *
 * <pre>{@code
 * try (ScorewireClient client = ScorewireClient.newBuilder("localhost:50051").build()) {
 *   ScoreResponse r = client.score(request);
 * }
 * }</pre>
 */
public final class ScorewireClient implements AutoCloseable {
  /** Default deadline of unary calls (Score, ListChecks, ValidateSuite, labels, runs). */
  public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(30);
  /** Default deadline of RunSuite (or RunSuiteStream) and ScoreStream calls. */
  public static final Duration DEFAULT_STREAM_DEADLINE = Duration.ofMinutes(10);
  /**
   * Default interval of keepalive pings while calls are open: 30 s in every scorewire
   * client, the server's own {@code keepalive_time_s}.
   */
  public static final Duration DEFAULT_KEEPALIVE_TIME = Duration.ofSeconds(30);
  /** Default wait for a keepalive ack before the connection is dropped. */
  public static final Duration DEFAULT_KEEPALIVE_TIMEOUT = Duration.ofSeconds(10);
  /** Default largest inbound message, matching the server's default. */
  public static final int DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
  /**
   * Cases per RunSuiteStream message: {@link #runSuite} sends a batch of more cases than
   * this as a RunSuiteStream (the run, then its cases this many a message), and a batch of
   * this many or fewer as one RunSuite; either is answered and fails the same way.
   */
  public static final int STREAM_CHUNK_CASES = 500;
  /** The most cases {@link #createJob} sends in one message, as {@link #STREAM_CHUNK_CASES}. */
  public static final int JOB_CHUNK_CASES = STREAM_CHUNK_CASES;
  /**
   * The most bytes of cases {@link #createJob} sends in one message (a larger case goes
   * alone). The server bounds the whole stream by its message limit and refuses more naming
   * {@code cases}; bounding each message keeps a batch of large cases within the channel's
   * message limit until the server has said so.
   */
  public static final int JOB_CHUNK_BYTES = 4 * 1024 * 1024;

  private static final Pattern HOST_PORT = Pattern.compile("^(\\[[^\\]]*\\]|[^:/\\[\\]]+):\\d+$");
  private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");

  private final ManagedChannel channel;
  private final boolean ownsChannel;
  private final Duration deadline;
  private final Duration streamDeadline;
  private final ScoringServiceGrpc.ScoringServiceBlockingStub blocking;
  private final ScoringServiceGrpc.ScoringServiceStub async;
  private final LabelServiceGrpc.LabelServiceBlockingStub labels;
  private final RunServiceGrpc.RunServiceBlockingStub runs;
  private final JobServiceGrpc.JobServiceBlockingStub jobs;
  private final ScorewireAsyncClient asyncClient;

  private ScorewireClient(Builder b, ManagedChannel channel, boolean ownsChannel) {
    this.channel = channel;
    this.ownsChannel = ownsChannel;
    this.deadline = b.deadline;
    this.streamDeadline = b.streamDeadline;
    this.blocking = ScoringServiceGrpc.newBlockingStub(channel);
    this.async = ScoringServiceGrpc.newStub(channel);
    this.labels = LabelServiceGrpc.newBlockingStub(channel);
    this.runs = RunServiceGrpc.newBlockingStub(channel);
    this.jobs = JobServiceGrpc.newBlockingStub(channel);
    this.asyncClient = new ScorewireAsyncClient(channel, deadline, streamDeadline);
  }

  /**
   * The default service config: gRPC's own retry on UNAVAILABLE (a replica lost, a proxy
   * answering 502 for it), up to 3 attempts 0.2 s to 2 s apart, as in every scorewire
   * client, sending the call again to the replica round_robin (or the proxy) picks:
   *
   * <ul>
   *   <li>PutLabels: a retry resends the same message, so the same request id, which the
   *       server stores at most once;
   *   <li>Score, RunSuite, RunSuiteStream ({@link #runSuite}'s batches over {@link
   *       #STREAM_CHUNK_CASES}), ListChecks and ValidateSuite: scoring is idempotent (a
   *       Score retried after its replica called a judge model may pay for that call
   *       twice). grpc-java retries only until the first response (its headers), and only
   *       while what the call has sent fits its retry buffer ({@code
   *       ManagedChannelBuilder.perRpcBufferLimit}, 1 MiB by default, within {@code
   *       retryBufferSize}, 16 MiB, for the whole channel; 256 KiB in the Go and Python
   *       clients): a RunSuite stream that breaks later, or a big RunSuite or
   *       RunSuiteStream, is not retried here.
   * </ul>
   *
   * ScoreStream is never retried: the caller's cases cannot be sent twice.
   */
  static Map<String, ?> serviceConfig() {
    Map<String, ?> retry =
        Map.of(
            "maxAttempts", 3.0,
            "initialBackoff", "0.2s",
            "maxBackoff", "2s",
            "backoffMultiplier", 2.0,
            "retryableStatusCodes", List.of("UNAVAILABLE"));
    Map<String, ?> putLabels =
        Map.of(
            "name", List.of(Map.of("service", "scorewire.v1.LabelService", "method", "PutLabels")),
            "retryPolicy", retry);
    Map<String, ?> scoring =
        Map.of(
            "name",
            Stream.of("Score", "RunSuite", "RunSuiteStream", "ListChecks", "ValidateSuite")
                .map(method -> Map.of("service", "scorewire.v1.ScoringService", "method", method))
                .toList(),
            "retryPolicy", retry);
    return Map.of("methodConfig", List.of(putLabels, scoring));
  }

  /**
   * A label's {@code output_hash} for an output: the SHA-256 of its exact UTF-8 bytes (no
   * trimming or normalization), as 64 lowercase hex digits.
   */
  public static String outputHash(String text) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(sha.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
  }

  /** A builder for a client of {@code target} ({@code host:port} or any gRPC target URI). */
  public static Builder newBuilder(String target) {
    return new Builder(Objects.requireNonNull(target, "target"));
  }

  /**
   * Turns {@code host:port} into {@code dns:///host:port}, so the name resolves to every
   * address and the balancer spreads calls over them; a target with a scheme is kept.
   */
  public static String normalizeTarget(String target) {
    boolean hostPort = HOST_PORT.matcher(target).matches();
    return SCHEME.matcher(target).find() && !hostPort ? target : "dns:///" + target;
  }

  /**
   * The same calls in asynchronous form, each returning a {@code CompletableFuture}, over
   * this client's channel and with its deadlines; closing this client ends them too.
   */
  public ScorewireAsyncClient async() {
    return asyncClient;
  }

  /** The generated blocking stub, for anything this wrapper does not cover. */
  public ScoringServiceGrpc.ScoringServiceBlockingStub blockingStub() {
    return blocking;
  }

  /** The generated asynchronous stub. */
  public ScoringServiceGrpc.ScoringServiceStub asyncStub() {
    return async;
  }

  /** Scores one output: one score per check, structured checks first, then compact ones. */
  public ScoreResponse score(ScoreRequest request) {
    return score(request, deadline);
  }

  /** Scores one output within {@code deadline}. */
  public ScoreResponse score(ScoreRequest request, Duration deadline) {
    return unary(() -> withDeadline(blocking, deadline).score(request));
  }

  /** Lists every check type the server knows, with its parameter schema. */
  public ListChecksResponse listChecks() {
    ListChecksRequest request = ListChecksRequest.getDefaultInstance();
    return unary(() -> withDeadline(blocking, deadline).listChecks(request));
  }

  /** Loads a suite (or checks) without running it and returns every problem found. */
  public ValidateSuiteResponse validateSuite(ValidateSuiteRequest request) {
    return unary(() -> withDeadline(blocking, deadline).validateSuite(request));
  }

  /**
   * Stores human labels, all or none, and returns them as stored. A request without a
   * request id gets a fresh one (a UUID) for this call, which gRPC's own retry on
   * UNAVAILABLE reuses, so a retry stores the labels at most once; set your own to retry
   * the call yourself.
   */
  public PutLabelsResponse putLabels(PutLabelsRequest request) {
    return putLabels(request, deadline);
  }

  /** Stores human labels within {@code deadline}. */
  public PutLabelsResponse putLabels(PutLabelsRequest request, Duration deadline) {
    PutLabelsRequest sent = withRequestId(request);
    return unary(() -> withDeadline(labels, deadline).putLabels(sent));
  }

  /** {@code request}, or when it has no request id, a copy with a fresh one (a UUID). */
  static PutLabelsRequest withRequestId(PutLabelsRequest request) {
    return request.getRequestId().isEmpty()
        ? request.toBuilder().setRequestId(UUID.randomUUID().toString()).build()
        : request;
  }

  /**
   * One page of the labels matching every filter set (oldest stored first); pass its
   * {@code next_page_token} as {@code page_token} for the next page.
   */
  public ListLabelsResponse listLabels(ListLabelsRequest request) {
    return unary(() -> withDeadline(labels, deadline).listLabels(request));
  }

  /** The generated LabelService blocking stub. */
  public LabelServiceGrpc.LabelServiceBlockingStub labelStub() {
    return labels;
  }

  // Recorded runs: a RunSuite or ScoreStream with record set is kept by the server, and
  // these calls read it back; RunSummary.run_id names it. With bearer tokens on, a token
  // sees only its own runs unless it is an admin. Every call fails with NOT_FOUND for a
  // run id that does not exist (or that the caller may not see), INVALID_ARGUMENT naming
  // the offending field, and UNAVAILABLE when the server has no run store or it does not
  // answer.

  /**
   * One page of recorded runs, newest first (by start time, then id), filtered by the
   * request's name, labels, start times and status; pass its {@code next_page_token} as
   * {@code page_token} for the next page. A page holds 100 runs unless {@code page_size}
   * says otherwise (1 to 1000).
   *
   * @throws ScorewireException when the call fails
   */
  public ListRunsResponse listRuns(ListRunsRequest request) {
    return listRuns(request, deadline);
  }

  /** One page of recorded runs within {@code deadline}. */
  public ListRunsResponse listRuns(ListRunsRequest request, Duration deadline) {
    return unary(() -> withDeadline(runs, deadline).listRuns(request));
  }

  /**
   * A recorded run's metadata and, once it is complete, its summary.
   *
   * @throws ScorewireException NOT_FOUND for an unknown run id
   */
  public Run getRun(String runId) {
    return getRun(runId, deadline);
  }

  /** A recorded run within {@code deadline}. */
  public Run getRun(String runId, Duration deadline) {
    GetRunRequest request = GetRunRequest.newBuilder().setRunId(runId).build();
    return unary(() -> withDeadline(runs, deadline).getRun(request).getRun());
  }

  /**
   * One page of a run's case results in the order they were recorded, filtered by check
   * (by name) and outcome; pass its {@code next_page_token} as {@code page_token} for the
   * next page (100 results unless {@code page_size} says otherwise).
   *
   * @throws ScorewireException NOT_FOUND for an unknown run id
   */
  public ListRunResultsResponse listRunResults(ListRunResultsRequest request) {
    return listRunResults(request, deadline);
  }

  /** One page of a run's case results within {@code deadline}. */
  public ListRunResultsResponse listRunResults(ListRunResultsRequest request, Duration deadline) {
    return unary(() -> withDeadline(runs, deadline).listRunResults(request));
  }

  /**
   * Compares {@code runId} with {@code baseRunId}: per-check pass-rate and mean deltas, and
   * the cases (matched by sample id) that regressed, improved or changed output, up to
   * 1000 of each (the counts are always complete; set {@code max_cases} through {@link
   * #runStub()} for more).
   *
   * @throws ScorewireException NOT_FOUND when either run id is unknown
   */
  public CompareRunsResponse compareRuns(String baseRunId, String runId) {
    return compareRuns(baseRunId, runId, deadline);
  }

  /** Compares two runs within {@code deadline}. */
  public CompareRunsResponse compareRuns(String baseRunId, String runId, Duration deadline) {
    CompareRunsRequest request =
        CompareRunsRequest.newBuilder().setBaseRunId(baseRunId).setRunId(runId).build();
    return unary(() -> withDeadline(runs, deadline).compareRuns(request));
  }

  /**
   * Deletes a finished run and its results.
   *
   * @throws ScorewireException NOT_FOUND for an unknown run id, FAILED_PRECONDITION for a
   *     run still running
   */
  public void deleteRun(String runId) {
    deleteRun(runId, deadline);
  }

  /** Deletes a run within {@code deadline}. */
  public void deleteRun(String runId, Duration deadline) {
    DeleteRunRequest request = DeleteRunRequest.newBuilder().setRunId(runId).build();
    unary(() -> withDeadline(runs, deadline).deleteRun(request));
  }

  /**
   * Opens a run to be sent in parts: each {@code runSuite} request names it in {@code
   * part} (the run id, and the run's index of its first case), and {@link
   * #closeRun(CloseRunRequest)} ends it; the server records the parts into one run and
   * counts it once. Returns its id: empty when the server does not record it.
   *
   * @throws ScorewireException when the call fails
   */
  public String openRun(OpenRunRequest request) {
    return unary(() -> withDeadline(runs, deadline).openRun(request).getRunId());
  }

  /**
   * Ends a run opened with {@link #openRun(OpenRunRequest)}: complete with its summary
   * (judged over every part, e.g. {@link Summaries#merge}), or incomplete when {@code
   * interrupted}.
   *
   * @throws ScorewireException FAILED_PRECONDITION, naming the run, when it has already
   *     ended (closed, or lapsed into incomplete)
   */
  public void closeRun(CloseRunRequest request) {
    unary(() -> withDeadline(runs, deadline).closeRun(request));
  }

  /** The generated RunService blocking stub. */
  public RunServiceGrpc.RunServiceBlockingStub runStub() {
    return runs;
  }

  // Evaluation jobs: a batch the server scores after its caller has gone. A job that ends
  // FAILED or CANCELLED is an answer (its state and error), not an exception. With bearer
  // tokens on, a job is its tenant's: another tenant's is NOT_FOUND.

  /** Whether a job in {@code state} has ended (SUCCEEDED, FAILED or CANCELLED): a watch's last state. */
  public static boolean jobEnded(JobState state) {
    return JobCalls.ended(state);
  }

  /**
   * Creates a job scoring {@code cases} with {@code config}'s plan (checks, compact lines, or
   * a suite document whose own cases are not scored), name, labels and webhook URL; its
   * case count is set to the number of cases. The cases go {@link #JOB_CHUNK_CASES} and at
   * most {@link #JOB_CHUNK_BYTES} a message, each built when the transport is ready for it.
   * Returns the job, QUEUED, once the server has stored it. The call has runSuite's default
   * deadline.
   *
   * @throws ScorewireException INVALID_ARGUMENT naming the check or case ({@code
   *     cases[12].output}), RESOURCE_EXHAUSTED past the server's case limit or its open jobs
   *     per tenant, FAILED_PRECONDITION naming {@code config.webhook_url} when the server has
   *     no secret to sign webhooks with; nothing is stored then
   */
  public Job createJob(JobConfig config, Iterable<Case> cases) {
    return createJob(config, cases, streamDeadline);
  }

  /** Creates a job within {@code deadline}. */
  public Job createJob(JobConfig config, Iterable<Case> cases, Duration deadline) {
    return JobCalls.await(asyncClient.createJob(config, cases, deadline));
  }

  /**
   * A job: its state and progress, and once it succeeded its summary and aggregations.
   *
   * @throws ScorewireException NOT_FOUND for an unknown job (or another tenant's)
   */
  public Job getJob(String jobId) {
    GetJobRequest request = GetJobRequest.newBuilder().setJobId(jobId).build();
    return unary(() -> withDeadline(jobs, deadline).getJob(request).getJob());
  }

  /**
   * Cancels a queued or running job and returns it, CANCELLED; its run ends incomplete with
   * what was recorded.
   *
   * @throws ScorewireException FAILED_PRECONDITION naming {@code job_id} for a job that has
   *     ended
   */
  public Job cancelJob(String jobId) {
    CancelJobRequest request = CancelJobRequest.newBuilder().setJobId(jobId).build();
    return unary(() -> withDeadline(jobs, deadline).cancelJob(request).getJob());
  }

  /**
   * The caller's jobs, newest first, filtered by the request's state, without summaries or
   * aggregations ({@link #getJob} has them): pages of {@code page_size} jobs (1 to 1000; 0:
   * the server's 100) from {@code page_token} on, each fetched (with the unary deadline) as
   * the iteration reaches it.
   *
   * @throws ScorewireException from the iteration, when a page's call fails
   */
  public Iterable<Job> listJobs(ListJobsRequest request) {
    return JobCalls.pages(page -> unary(() -> withDeadline(jobs, deadline).listJobs(page)), request);
  }

  /**
   * Watches a job: iterate the returned watch for the job now and at each change of its
   * state or progress, to its end. No deadline: a job may run for hours.
   */
  public JobWatch watchJob(String jobId) {
    return watchJob(jobId, null);
  }

  /** Watches a job within {@code deadline} ({@code null} for none). */
  public JobWatch watchJob(String jobId, Duration deadline) {
    return new JobWatch(withDeadline(jobs, deadline), jobId);
  }

  /**
   * Watches a job to its end and returns it: for a job that succeeded with its summary,
   * aggregations and run id; a FAILED job (with its error) or a CANCELLED one too. No
   * deadline: a job may run for hours.
   *
   * @throws ScorewireException when the call fails
   */
  public Job waitJob(String jobId) {
    return waitJob(jobId, null);
  }

  /** Waits for a job's end within {@code deadline} ({@code null} for none). */
  public Job waitJob(String jobId, Duration deadline) {
    Job last = null;
    try (JobWatch watch = watchJob(jobId, deadline)) {
      for (Job job : watch) {
        last = job;
      }
    }
    if (last == null || !jobEnded(last.getState())) {
      throw JobCalls.notEnded();
    }
    return last;
  }

  /** The generated JobService blocking stub. */
  public JobServiceGrpc.JobServiceBlockingStub jobStub() {
    return jobs;
  }

  /**
   * Runs a suite over a batch of cases. Iterate the returned run for the case results
   * (in completion order, each exactly once), then call {@link SuiteRun#summary()}; close
   * it to cancel a run left early. A batch of more than {@link #STREAM_CHUNK_CASES} cases
   * goes as a RunSuiteStream, its cases in chunks sent as the transport takes them, so
   * the server checks and scores the first while the rest are still being serialized and
   * sent; its results, summary and errors (field paths counting from the first case) are
   * RunSuite's.
   */
  public SuiteRun runSuite(RunSuiteRequest request) {
    return runSuite(request, streamDeadline);
  }

  /** Runs a suite within {@code deadline}. */
  public SuiteRun runSuite(RunSuiteRequest request, Duration deadline) {
    if (streamed(request)) {
      return SuiteRun.streamed(withDeadline(async, deadline), request);
    }
    return new SuiteRun(withDeadline(blocking, deadline), request);
  }

  /** Whether {@code request} goes as a RunSuiteStream: more than {@link #STREAM_CHUNK_CASES} cases. */
  static boolean streamed(RunSuiteRequest request) {
    return request.getCasesCount() > STREAM_CHUNK_CASES;
  }

  /**
   * Runs one large batch over several replicas: the request's cases are split into chunks
   * of consecutive cases (at least {@link ShardOptions#shards()}, at most {@link
   * ShardOptions#chunkCases()} each) sent as separate {@link #runSuite} calls (a chunk of
   * more than {@link #STREAM_CHUNK_CASES} cases is a RunSuiteStream), that many at a time
   * on threads of the run's own, over this client's channel, whose round_robin policy (a
   * name resolving to several addresses) or an L7 proxy spreads them over the replicas.
   *
   * <p>A chunk whose call fails with UNAVAILABLE or whose stream breaks ({@link
   * ScorewireException#retryable()}) is sent again whole, to the replica the channel picks
   * next, up to {@link ShardOptions#chunkAttempts()} times in all; any other error fails
   * the run and cancels the other chunks. A chunk's results count only once its summary
   * has arrived, so every case is reported once (its {@code index} its position in the
   * request's cases) and agrees with the merged summary ({@link Summaries#merge}). The
   * summary of a run of one chunk is the server's unchanged (its gate verdict, generation
   * cost, matrix and, for a recorded run, {@code run_id}); several chunks' summaries are
   * added up (generation costs and calls, matrix cells by prompt and provider), their gate
   * judged again on the merged totals, and carry no {@code run_id}: each chunk was
   * recorded as a run of its own. The request's {@code budget_usd}, when set, is divided
   * among the chunks in proportion to their cases, so the batch never spends more than
   * it. A request without cases (a suite document with its own, whose outputs the server
   * generates) runs as one chunk, and so does a checkllm batch (its {@code format}
   * SUITE_FORMAT_CHECKLLM, or a case naming its combination by {@code test}, {@code
   * prompt} or {@code provider}), sent whole with its whole budget: the server scores one
   * only with every combination present. Each chunk's call has the default deadline of
   * runSuite.
   *
   * @throws ScorewireException the first chunk failure that was not retried (or {@code
   *     CANCELLED} when the calling thread is interrupted)
   */
  public ShardedResult runSuiteSharded(RunSuiteRequest request, ShardOptions options) {
    return runSuiteSharded(request, options, streamDeadline);
  }

  /** Runs a batch over several replicas, each chunk's call within {@code deadline}. */
  public ShardedResult runSuiteSharded(RunSuiteRequest request, ShardOptions options, Duration deadline) {
    return Shards.run(this, request, Objects.requireNonNull(options, "options"), deadline);
  }

  /**
   * Opens a ScoreStream with {@code config} (the checks; sent first). {@link
   * ScoreStream#send} cases, {@link ScoreStream#complete()} when done, and iterate the
   * responses, which arrive in completion order with their request ids.
   */
  public ScoreStream scoreStream(StreamConfig config) {
    return scoreStream(config, streamDeadline);
  }

  /** Opens a ScoreStream that must finish within {@code deadline}. */
  public ScoreStream scoreStream(StreamConfig config, Duration deadline) {
    return new ScoreStream(withDeadline(async, deadline), config);
  }

  /**
   * An {@link Observer} sending production outputs to ObserveService over this client's
   * channel, from a background thread: {@code observe} never blocks or throws. Close it before
   * the client.
   */
  public Observer observer(ObserverOptions options) {
    return new Observer(channel, options);
  }

  /** An {@link Observer} with {@link ObserverOptions#defaults()}. */
  public Observer observer() {
    return observer(ObserverOptions.defaults());
  }

  /** Shuts the channel down (if this client created it), waiting up to five seconds. */
  @Override
  public void close() {
    if (!ownsChannel) {
      return;
    }
    channel.shutdown();
    try {
      if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
        channel.shutdownNow();
      }
    } catch (InterruptedException e) {
      channel.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  /** A blocking call's answer; its failure as a {@link ScorewireException}. */
  private static <T> T unary(Supplier<T> call) {
    try {
      return call.get();
    } catch (StatusRuntimeException e) {
      throw ScorewireException.from(e);
    }
  }

  static <S extends io.grpc.stub.AbstractStub<S>> S withDeadline(S stub, Duration d) {
    return d == null ? stub : stub.withDeadlineAfter(d.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** Builds a {@link ScorewireClient}; every setting has a default. */
  public static final class Builder {
    private final String target;
    private ChannelCredentials credentials = InsecureChannelCredentials.create();
    private Duration deadline = DEFAULT_DEADLINE;
    private Duration streamDeadline = DEFAULT_STREAM_DEADLINE;
    private Duration keepAliveTime = DEFAULT_KEEPALIVE_TIME;
    private Duration keepAliveTimeout = DEFAULT_KEEPALIVE_TIMEOUT;
    private String loadBalancingPolicy = "round_robin";
    private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
    private ManagedChannel channel;

    private Builder(String target) {
      this.target = target;
    }

    /** Channel credentials; plaintext by default. */
    public Builder credentials(ChannelCredentials credentials) {
      this.credentials = Objects.requireNonNull(credentials, "credentials");
      return this;
    }

    /** Deadline of unary calls; {@code null} for none. Default 30 s. */
    public Builder deadline(Duration deadline) {
      this.deadline = deadline;
      return this;
    }

    /** Deadline of runSuite and ScoreStream calls; {@code null} for none. Default 10 min. */
    public Builder streamDeadline(Duration streamDeadline) {
      this.streamDeadline = streamDeadline;
      return this;
    }

    /**
     * Interval of keepalive pings while calls are open; default 30 s. The server must
     * allow pings this often, or it answers with GOAWAY {@code too_many_pings}.
     */
    public Builder keepAliveTime(Duration keepAliveTime) {
      this.keepAliveTime = Objects.requireNonNull(keepAliveTime, "keepAliveTime");
      return this;
    }

    /** Wait for a keepalive ack before the connection is dropped; default 10 s. */
    public Builder keepAliveTimeout(Duration keepAliveTimeout) {
      this.keepAliveTimeout = Objects.requireNonNull(keepAliveTimeout, "keepAliveTimeout");
      return this;
    }

    /** Load-balancing policy over the resolved addresses; default {@code round_robin}. */
    public Builder loadBalancingPolicy(String policy) {
      this.loadBalancingPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /** Largest inbound message in bytes; default 64 MiB (the server's default). */
    public Builder maxMessageBytes(int maxMessageBytes) {
      this.maxMessageBytes = maxMessageBytes;
      return this;
    }

    /**
     * Uses {@code channel} instead of building one (the channel settings above are then
     * ignored, and {@link ScorewireClient#close()} leaves the channel open).
     */
    public Builder channel(ManagedChannel channel) {
      this.channel = channel;
      return this;
    }

    /** Builds the client, creating its channel unless one was given. */
    public ScorewireClient build() {
      if (channel != null) {
        return new ScorewireClient(this, channel, false);
      }
      ManagedChannel built =
          Grpc.newChannelBuilder(normalizeTarget(target), credentials)
              .defaultServiceConfig(serviceConfig())
              .enableRetry()
              .defaultLoadBalancingPolicy(loadBalancingPolicy)
              .keepAliveTime(keepAliveTime.toNanos(), TimeUnit.NANOSECONDS)
              .keepAliveTimeout(keepAliveTimeout.toNanos(), TimeUnit.NANOSECONDS)
              .keepAliveWithoutCalls(false)
              .maxInboundMessageSize(maxMessageBytes)
              .build();
      return new ScorewireClient(this, built, true);
    }
  }
}
