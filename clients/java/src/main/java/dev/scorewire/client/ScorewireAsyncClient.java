package dev.scorewire.client;

import static dev.scorewire.client.ScorewireClient.withDeadline;

import dev.scorewire.v1.CancelJobRequest;
import dev.scorewire.v1.CancelJobResponse;
import dev.scorewire.v1.Case;
import dev.scorewire.v1.CompareRunsRequest;
import dev.scorewire.v1.CompareRunsResponse;
import dev.scorewire.v1.DeleteRunRequest;
import dev.scorewire.v1.GetJobRequest;
import dev.scorewire.v1.GetJobResponse;
import dev.scorewire.v1.GetRunRequest;
import dev.scorewire.v1.GetRunResponse;
import dev.scorewire.v1.Job;
import dev.scorewire.v1.JobConfig;
import dev.scorewire.v1.JobServiceGrpc;
import dev.scorewire.v1.LabelServiceGrpc;
import dev.scorewire.v1.ListChecksRequest;
import dev.scorewire.v1.ListChecksResponse;
import dev.scorewire.v1.ListJobsRequest;
import dev.scorewire.v1.ListJobsResponse;
import dev.scorewire.v1.ListLabelsRequest;
import dev.scorewire.v1.ListLabelsResponse;
import dev.scorewire.v1.ListRunResultsRequest;
import dev.scorewire.v1.ListRunResultsResponse;
import dev.scorewire.v1.ListRunsRequest;
import dev.scorewire.v1.ListRunsResponse;
import dev.scorewire.v1.PutLabelsRequest;
import dev.scorewire.v1.PutLabelsResponse;
import dev.scorewire.v1.Run;
import dev.scorewire.v1.RunServiceGrpc;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.ScoreRequest;
import dev.scorewire.v1.ScoreResponse;
import dev.scorewire.v1.ScoringServiceGrpc;
import dev.scorewire.v1.ValidateSuiteRequest;
import dev.scorewire.v1.ValidateSuiteResponse;
import io.grpc.Channel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * {@link ScorewireClient}'s calls in asynchronous form ({@link ScorewireClient#async()}):
 * each starts the call and returns a {@link CompletableFuture} at once, over the client's
 * channel, with its deadlines, retries and defaults.
 *
 * <ul>
 *   <li>A failed call completes its future exceptionally with the {@link
 *       ScorewireException} the blocking call would throw, code, description and field
 *       violations included: {@code join()} throws it wrapped in a {@code
 *       CompletionException}, {@code get()} in an {@code ExecutionException}.
 *   <li>Cancelling the returned future ({@code cancel(true)} or {@code cancel(false)})
 *       cancels the call; a future derived from it ({@code thenApply}, ...) does not
 *       cancel it.
 *   <li>The futures complete on gRPC's callback threads, where stages added without an
 *       executor also run: give those stages an executor of your own ({@code
 *       thenApplyAsync(f, executor)}) for anything that blocks.
 * </ul>
 *
 * <pre>{@code
 * client.async().score(request)
 *     .thenAccept(r -> System.out.println(r.getPassed()))
 *     .exceptionally(e -> { ... e.getCause() is a ScorewireException ... });
 * }</pre>
 */
public final class ScorewireAsyncClient {
  private final ScoringServiceGrpc.ScoringServiceStub scoring;
  private final LabelServiceGrpc.LabelServiceStub labels;
  private final RunServiceGrpc.RunServiceStub runs;
  private final JobServiceGrpc.JobServiceStub jobs;
  private final Duration deadline;
  private final Duration streamDeadline;

  ScorewireAsyncClient(Channel channel, Duration deadline, Duration streamDeadline) {
    this.scoring = ScoringServiceGrpc.newStub(channel);
    this.labels = LabelServiceGrpc.newStub(channel);
    this.runs = RunServiceGrpc.newStub(channel);
    this.jobs = JobServiceGrpc.newStub(channel);
    this.deadline = deadline;
    this.streamDeadline = streamDeadline;
  }

  /** Scores one output: one score per check, structured checks first, then compact ones. */
  public CompletableFuture<ScoreResponse> score(ScoreRequest request) {
    return score(request, deadline);
  }

  /** Scores one output within {@code deadline}. */
  public CompletableFuture<ScoreResponse> score(ScoreRequest request, Duration deadline) {
    return AsyncCalls.unary(withDeadline(scoring, deadline)::score, request);
  }

  /** Lists every check type the server knows, with its parameter schema. */
  public CompletableFuture<ListChecksResponse> listChecks() {
    return AsyncCalls.unary(
        withDeadline(scoring, deadline)::listChecks, ListChecksRequest.getDefaultInstance());
  }

  /** Loads a suite (or checks) without running it and returns every problem found. */
  public CompletableFuture<ValidateSuiteResponse> validateSuite(ValidateSuiteRequest request) {
    return AsyncCalls.unary(withDeadline(scoring, deadline)::validateSuite, request);
  }

  /**
   * Runs a suite over a batch of cases and collects every case's result (in completion
   * order) and the summary. A batch of more than {@link
   * ScorewireClient#STREAM_CHUNK_CASES} cases goes as a RunSuiteStream, as with {@link
   * ScorewireClient#runSuite}; results, summary and errors are the same either way. Holds
   * every result in memory: iterate {@link ScorewireClient#runSuite} to handle results as
   * they come.
   */
  public CompletableFuture<SuiteResult> runSuite(RunSuiteRequest request) {
    return runSuite(request, streamDeadline);
  }

  /** Runs a suite within {@code deadline} and collects it. */
  public CompletableFuture<SuiteResult> runSuite(RunSuiteRequest request, Duration deadline) {
    return AsyncCalls.runSuite(withDeadline(scoring, deadline), request);
  }

  /**
   * Stores human labels, all or none, as {@link ScorewireClient#putLabels}: a request
   * without a request id gets a fresh one for this call.
   */
  public CompletableFuture<PutLabelsResponse> putLabels(PutLabelsRequest request) {
    return putLabels(request, deadline);
  }

  /** Stores human labels within {@code deadline}. */
  public CompletableFuture<PutLabelsResponse> putLabels(PutLabelsRequest request, Duration deadline) {
    return AsyncCalls.unary(
        withDeadline(labels, deadline)::putLabels, ScorewireClient.withRequestId(request));
  }

  /** One page of the labels matching every filter set (oldest stored first). */
  public CompletableFuture<ListLabelsResponse> listLabels(ListLabelsRequest request) {
    return AsyncCalls.unary(withDeadline(labels, deadline)::listLabels, request);
  }

  /** One page of recorded runs, newest first, as {@link ScorewireClient#listRuns}. */
  public CompletableFuture<ListRunsResponse> listRuns(ListRunsRequest request) {
    return listRuns(request, deadline);
  }

  /** One page of recorded runs within {@code deadline}. */
  public CompletableFuture<ListRunsResponse> listRuns(ListRunsRequest request, Duration deadline) {
    return AsyncCalls.unary(withDeadline(runs, deadline)::listRuns, request);
  }

  /** A recorded run; NOT_FOUND for an unknown run id. */
  public CompletableFuture<Run> getRun(String runId) {
    return getRun(runId, deadline);
  }

  /** A recorded run within {@code deadline}. */
  public CompletableFuture<Run> getRun(String runId, Duration deadline) {
    GetRunRequest request = GetRunRequest.newBuilder().setRunId(runId).build();
    return AsyncCalls.unary(withDeadline(runs, deadline)::getRun, request, GetRunResponse::getRun);
  }

  /** One page of a run's case results, as {@link ScorewireClient#listRunResults}. */
  public CompletableFuture<ListRunResultsResponse> listRunResults(ListRunResultsRequest request) {
    return listRunResults(request, deadline);
  }

  /** One page of a run's case results within {@code deadline}. */
  public CompletableFuture<ListRunResultsResponse> listRunResults(
      ListRunResultsRequest request, Duration deadline) {
    return AsyncCalls.unary(withDeadline(runs, deadline)::listRunResults, request);
  }

  /** Compares {@code runId} with {@code baseRunId}, as {@link ScorewireClient#compareRuns}. */
  public CompletableFuture<CompareRunsResponse> compareRuns(String baseRunId, String runId) {
    return compareRuns(baseRunId, runId, deadline);
  }

  /** Compares two runs within {@code deadline}. */
  public CompletableFuture<CompareRunsResponse> compareRuns(
      String baseRunId, String runId, Duration deadline) {
    CompareRunsRequest request =
        CompareRunsRequest.newBuilder().setBaseRunId(baseRunId).setRunId(runId).build();
    return AsyncCalls.unary(withDeadline(runs, deadline)::compareRuns, request);
  }

  /** Deletes a finished run and its results, as {@link ScorewireClient#deleteRun}. */
  public CompletableFuture<Void> deleteRun(String runId) {
    return deleteRun(runId, deadline);
  }

  /** Deletes a run within {@code deadline}. */
  public CompletableFuture<Void> deleteRun(String runId, Duration deadline) {
    DeleteRunRequest request = DeleteRunRequest.newBuilder().setRunId(runId).build();
    return AsyncCalls.unary(withDeadline(runs, deadline)::deleteRun, request, response -> (Void) null);
  }

  /**
   * Creates a job scoring {@code cases}, as {@link ScorewireClient#createJob}: the future
   * holds the job, QUEUED, once the server has stored it, or fails with the refusal.
   */
  public CompletableFuture<Job> createJob(JobConfig config, Iterable<Case> cases) {
    return createJob(config, cases, streamDeadline);
  }

  /** Creates a job within {@code deadline}. */
  public CompletableFuture<Job> createJob(JobConfig config, Iterable<Case> cases, Duration deadline) {
    return JobCalls.create(withDeadline(jobs, deadline), config, cases);
  }

  /** A job, as {@link ScorewireClient#getJob}; NOT_FOUND for an unknown job. */
  public CompletableFuture<Job> getJob(String jobId) {
    GetJobRequest request = GetJobRequest.newBuilder().setJobId(jobId).build();
    return AsyncCalls.unary(withDeadline(jobs, deadline)::getJob, request, GetJobResponse::getJob);
  }

  /** Cancels a job, as {@link ScorewireClient#cancelJob}: the future holds it, CANCELLED. */
  public CompletableFuture<Job> cancelJob(String jobId) {
    CancelJobRequest request = CancelJobRequest.newBuilder().setJobId(jobId).build();
    return AsyncCalls.unary(withDeadline(jobs, deadline)::cancelJob, request, CancelJobResponse::getJob);
  }

  /**
   * One page of the caller's jobs, newest first, filtered by the request's state; pass its
   * {@code next_page_token} as {@code page_token} for the next page ({@link
   * ScorewireClient#listJobs} iterates every page).
   */
  public CompletableFuture<ListJobsResponse> listJobs(ListJobsRequest request) {
    return AsyncCalls.unary(withDeadline(jobs, deadline)::listJobs, request);
  }

  /**
   * Watches a job: {@code onUpdate} receives the job now and at each change of its state or
   * progress, on gRPC's callback thread (one at a time, in order), and the future completes
   * with the last, once the job has ended. An exception {@code onUpdate} throws cancels the
   * call and fails the future with it; cancelling the future cancels the call. No deadline:
   * a job may run for hours.
   */
  public CompletableFuture<Job> watchJob(String jobId, Consumer<Job> onUpdate) {
    return watchJob(jobId, onUpdate, null);
  }

  /** Watches a job within {@code deadline} ({@code null} for none). */
  public CompletableFuture<Job> watchJob(String jobId, Consumer<Job> onUpdate, Duration deadline) {
    return JobCalls.watch(withDeadline(jobs, deadline), jobId, onUpdate);
  }

  /**
   * The job at its end, as {@link ScorewireClient#waitJob}: with its summary, aggregations
   * and run id when it succeeded; FAILED and CANCELLED jobs too. No deadline.
   */
  public CompletableFuture<Job> waitJob(String jobId) {
    return watchJob(jobId, job -> {}, null);
  }
}
