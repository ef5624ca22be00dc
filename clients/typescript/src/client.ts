import { createHash, randomUUID } from "node:crypto";

import * as grpc from "@grpc/grpc-js";

import { ScorewireError, toScorewireError } from "./errors";
import { jobEnded, writeJob } from "./jobs";
import { Observer, type ObserverOptions } from "./observe";
import { type ShardOptions, type ShardedResult, runSharded } from "./shards";
import {
  Case,
  type CaseResult,
  type DeepPartial,
  ListChecksRequest,
  type ListChecksResponse,
  RunSuiteRequest,
  type RunSuiteResponse,
  type RunSuiteStreamRequest,
  type RunSuiteStreamResponse,
  type RunSummary,
  ScoreRequest,
  type ScoreResponse,
  ScoreStreamRequest,
  type ScoreStreamResponse,
  ScoringServiceClient,
  StreamCase,
  StreamConfig,
  ValidateSuiteRequest,
  type ValidateSuiteResponse,
} from "./gen/scorewire/v1/scoring";
import {
  LabelServiceClient,
  ListLabelsRequest,
  type ListLabelsResponse,
  PutLabelsRequest,
  type PutLabelsResponse,
} from "./gen/scorewire/v1/labels";
import {
  CloseRunRequest,
  CompareRunsRequest,
  type CompareRunsResponse,
  DeleteRunRequest,
  GetRunRequest,
  type GetRunResponse,
  ListRunResultsRequest,
  type ListRunResultsResponse,
  ListRunsRequest,
  type ListRunsResponse,
  OpenRunRequest,
  type OpenRunResponse,
  type Run,
  RunServiceClient,
} from "./gen/scorewire/v1/runs";
import {
  CancelJobRequest,
  type CancelJobResponse,
  type CreateJobResponse,
  GetJobRequest,
  type GetJobResponse,
  type Job,
  JobConfig,
  JobServiceClient,
  ListJobsRequest,
  type ListJobsResponse,
  WatchJobRequest,
  type WatchJobResponse,
} from "./gen/scorewire/v1/jobs";

/** How a ScorewireClient connects; every field has a default. */
export interface ScorewireClientOptions {
  /** Channel credentials; defaults to plaintext (`grpc.credentials.createInsecure()`). */
  credentials?: grpc.ChannelCredentials;
  /** Deadline of unary calls (Score, ListChecks, ValidateSuite, labels, runs) in ms; default 30 s. */
  timeoutMs?: number;
  /** Deadline of RunSuite, ScoreStream and CreateJob calls in ms; default 10 minutes. */
  streamTimeoutMs?: number;
  /**
   * Interval of HTTP/2 keepalive pings while calls are open, in ms; default 30 s, as in
   * every scorewire client and the server's own `keepalive_time_s`. The server must
   * allow pings this often (it allows one every 5 s), or it answers with GOAWAY
   * `too_many_pings`.
   */
  keepaliveTimeMs?: number;
  /** How long to wait for a keepalive ack before dropping the connection; default 10 s. */
  keepaliveTimeoutMs?: number;
  /** Load-balancing policy over the addresses DNS returns; default `round_robin`. */
  loadBalancing?: "round_robin" | "pick_first";
  /** Largest message sent or received, in bytes; default 64 MiB (the server's default). */
  maxMessageBytes?: number;
  /** Extra grpc-js channel options; they override the ones derived above. */
  channelOptions?: grpc.ChannelOptions;
}

/** Per-call options. */
export interface CallOptions {
  /** This call's deadline in ms from now; `Infinity` for none. Defaults per client. */
  timeoutMs?: number;
  /** Request metadata (headers). */
  metadata?: grpc.Metadata;
  /** Cancels the call when aborted; the call then fails with CANCELLED. */
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_STREAM_TIMEOUT_MS = 10 * 60_000;
/** Keepalive ping interval of every scorewire client (the server's keepalive_time_s). */
export const DEFAULT_KEEPALIVE_TIME_MS = 30_000;
export const DEFAULT_KEEPALIVE_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/**
 * Cases per RunSuiteStream chunk: `runSuite` sends a batch of more cases than this as a
 * RunSuiteStream, this many cases a message, so the server checks and scores the first
 * chunks while the rest are still being sent; a batch of this many or fewer goes as one
 * RunSuite. The same in every scorewire client.
 */
export const STREAM_CHUNK_CASES = 500;

const noop = (): void => {};

/**
 * Turns `host:port` into `dns:///host:port` so the name resolves to every address and
 * the balancer spreads calls over them; a target with a scheme (`dns:`, `unix:`,
 * `ipv4:`, ...) is kept as is.
 */
export function normalizeTarget(address: string): string {
  const hostPort = /^(\[[^\]]*\]|[^:/[\]]+):\d+$/.test(address);
  const hasScheme = /^[a-z][a-z0-9+.-]*:/i.test(address);
  return hasScheme && !hostPort ? address : `dns:///${address}`;
}

/** gRPC's own retry on UNAVAILABLE: up to 3 attempts, 0.2 s to 2 s apart, as in every scorewire client. */
const RETRY_ON_UNAVAILABLE = {
  maxAttempts: 3,
  initialBackoff: "0.2s",
  maxBackoff: "2s",
  backoffMultiplier: 2,
  retryableStatusCodes: ["UNAVAILABLE"],
};

/** The channel options a client opens its channel with. */
export function channelOptionsFor(options: ScorewireClientOptions): grpc.ChannelOptions {
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const policy = options.loadBalancing ?? "round_robin";
  return {
    "grpc.service_config": JSON.stringify({
      loadBalancingConfig: [{ [policy]: {} }],
      // gRPC's own retry on UNAVAILABLE (a replica lost, a proxy answering 502 for it)
      // sends the call again, to the replica round_robin (or the proxy) picks:
      // - PutLabels: a retry resends the same message, so the same requestId, which the
      //   server stores at most once;
      // - Score, RunSuite, RunSuiteStream (runSuite's batches over STREAM_CHUNK_CASES),
      //   ListChecks and ValidateSuite: scoring is idempotent (a Score retried after its
      //   replica called a judge model may pay for that call twice). grpc-js retries
      //   only until the first response (its headers or first message), and only while
      //   what the call has sent fits its retry buffer (`grpc.per_rpc_retry_buffer_size`,
      //   1 MiB by default in grpc-js, within `grpc.retry_buffer_size`, 16 MiB, for the
      //   whole channel; 256 KiB in the Go and Python clients): a RunSuite stream that
      //   breaks later, or a big RunSuite or RunSuiteStream, is not retried here.
      // ScoreStream is never retried: the caller's cases cannot be sent twice.
      methodConfig: [
        {
          name: [{ service: "scorewire.v1.LabelService", method: "PutLabels" }],
          retryPolicy: RETRY_ON_UNAVAILABLE,
        },
        {
          name: ["Score", "RunSuite", "RunSuiteStream", "ListChecks", "ValidateSuite"].map((method) => ({
            service: "scorewire.v1.ScoringService",
            method,
          })),
          retryPolicy: RETRY_ON_UNAVAILABLE,
        },
      ],
    }),
    "grpc.keepalive_time_ms": options.keepaliveTimeMs ?? DEFAULT_KEEPALIVE_TIME_MS,
    "grpc.keepalive_timeout_ms": options.keepaliveTimeoutMs ?? DEFAULT_KEEPALIVE_TIMEOUT_MS,
    "grpc.keepalive_permit_without_calls": 0,
    "grpc.max_receive_message_length": maxBytes,
    "grpc.max_send_message_length": maxBytes,
    ...options.channelOptions,
  };
}

/**
 * A label's `outputHash` for an output: the SHA-256 of its exact UTF-8 bytes (no
 * trimming or normalization), as 64 lowercase hex digits.
 */
export function outputHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * A client of scorewire.v1.ScoringService, LabelService, RunService and JobService: the generated grpc-js stubs with defaults
 * (deadlines, keepalive, round-robin over DNS), promise and async-iterator call shapes,
 * and failures as ScorewireError.
 */
export class ScorewireClient {
  /** The generated stub, for anything the wrapper does not cover. */
  readonly stub: ScoringServiceClient;
  /** The generated LabelService stub, on the same channel. */
  readonly labelStub: LabelServiceClient;
  /** The generated RunService stub, on the same channel. */
  readonly runStub: RunServiceClient;
  /** The generated JobService stub, on the same channel. */
  readonly jobStub: JobServiceClient;
  private readonly timeoutMs: number;
  private readonly streamTimeoutMs: number;

  /** Opens a channel to `address` (`host:port` or any grpc-js target). */
  constructor(address: string, options: ScorewireClientOptions = {}) {
    this.stub = new ScoringServiceClient(
      normalizeTarget(address),
      options.credentials ?? grpc.credentials.createInsecure(),
      channelOptionsFor(options),
    );
    this.labelStub = new LabelServiceClient(address, grpc.credentials.createInsecure(), {
      channelOverride: this.stub.getChannel(),
    });
    this.runStub = new RunServiceClient(address, grpc.credentials.createInsecure(), {
      channelOverride: this.stub.getChannel(),
    });
    this.jobStub = new JobServiceClient(address, grpc.credentials.createInsecure(), {
      channelOverride: this.stub.getChannel(),
    });
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.streamTimeoutMs = options.streamTimeoutMs ?? DEFAULT_STREAM_TIMEOUT_MS;
  }

  /** Scores one output against the request's checks: one score per check, in order. */
  score(request: DeepPartial<ScoreRequest>, options: CallOptions = {}): Promise<ScoreResponse> {
    return this.unary((md, opts, cb) => this.stub.score(ScoreRequest.fromPartial(request), md, opts, cb), options);
  }

  /** Lists every check type the server knows, with its parameter schema. */
  listChecks(options: CallOptions = {}): Promise<ListChecksResponse> {
    return this.unary(
      (md, opts, cb) => this.stub.listChecks(ListChecksRequest.fromPartial({}), md, opts, cb),
      options,
    );
  }

  /** Loads a suite (or checks) without running it and returns every problem found. */
  validateSuite(request: DeepPartial<ValidateSuiteRequest>, options: CallOptions = {}): Promise<ValidateSuiteResponse> {
    return this.unary(
      (md, opts, cb) => this.stub.validateSuite(ValidateSuiteRequest.fromPartial(request), md, opts, cb),
      options,
    );
  }

  /**
   * Stores human labels, all or none, and resolves with them as stored. Without a
   * `requestId` the call gets a fresh one (a UUID), which gRPC's own retry on
   * UNAVAILABLE reuses, so a retry stores the labels at most once; give your own to
   * retry the call yourself.
   */
  putLabels(request: DeepPartial<PutLabelsRequest>, options: CallOptions = {}): Promise<PutLabelsResponse> {
    const message = PutLabelsRequest.fromPartial({ ...request, requestId: request.requestId || randomUUID() });
    return this.unary((md, opts, cb) => this.labelStub.putLabels(message, md, opts, cb), options);
  }

  /**
   * One page of the labels matching every filter set (oldest stored first); pass its
   * `nextPageToken` as `pageToken` for the next page.
   */
  listLabels(request: DeepPartial<ListLabelsRequest> = {}, options: CallOptions = {}): Promise<ListLabelsResponse> {
    return this.unary(
      (md, opts, cb) => this.labelStub.listLabels(ListLabelsRequest.fromPartial(request), md, opts, cb),
      options,
    );
  }

  // Recorded runs: a runSuite or scoreStream with `record` set is kept by the server, and
  // these calls read it back; `RunSummary.runId` names it. With bearer tokens on, a token
  // sees only its own runs unless it is an admin; another's run is NOT_FOUND.

  /**
   * One page of recorded runs, newest first, filtered by `name`, `labels`, start times
   * and `status` (every filter set must match; none set lists every run). Pass its
   * `nextPageToken` as `pageToken` for the next page; `pageSize` 0 means 100.
   */
  listRuns(request: DeepPartial<ListRunsRequest> = {}, options: CallOptions = {}): Promise<ListRunsResponse> {
    return this.unary(
      (md, opts, cb) => this.runStub.listRuns(ListRunsRequest.fromPartial(request), md, opts, cb),
      options,
    );
  }

  /**
   * A run's metadata and, once it is complete, its summary. Rejects with NOT_FOUND for an
   * id that does not exist (or that the caller may not see).
   */
  async getRun(runId: string, options: CallOptions = {}): Promise<Run> {
    const response = await this.unary<GetRunResponse>(
      (md, opts, cb) => this.runStub.getRun(GetRunRequest.fromPartial({ runId }), md, opts, cb),
      options,
    );
    if (response.run === undefined) {
      throw new ScorewireError(grpc.status.INTERNAL, "GetRun answered without a run");
    }
    return response.run;
  }

  /**
   * One page of a run's case results in recorded (completion) order, each with its case
   * as sent: only cases whose `check` (by name) has `outcome`, when set. Pass its
   * `nextPageToken` as `pageToken` for the next page. NOT_FOUND for an unknown run.
   */
  listRunResults(
    request: DeepPartial<ListRunResultsRequest>,
    options: CallOptions = {},
  ): Promise<ListRunResultsResponse> {
    return this.unary(
      (md, opts, cb) => this.runStub.listRunResults(ListRunResultsRequest.fromPartial(request), md, opts, cb),
      options,
    );
  }

  /**
   * Compares run `runId` with `baseRunId`, matching cases by sample id: per-check
   * pass-rate and mean deltas, and the cases that regressed, improved or changed output
   * (at most 1,000 of each listed; the counts are complete). NOT_FOUND when either run
   * is unknown.
   */
  compareRuns(baseRunId: string, runId: string, options: CallOptions = {}): Promise<CompareRunsResponse> {
    return this.unary(
      (md, opts, cb) =>
        this.runStub.compareRuns(CompareRunsRequest.fromPartial({ baseRunId, runId }), md, opts, cb),
      options,
    );
  }

  /**
   * Deletes a finished run and its results. NOT_FOUND for an unknown run;
   * FAILED_PRECONDITION while the run is still running.
   */
  async deleteRun(runId: string, options: CallOptions = {}): Promise<void> {
    await this.unary(
      (md, opts, cb) => this.runStub.deleteRun(DeleteRunRequest.fromPartial({ runId }), md, opts, cb),
      options,
    );
  }

  /**
   * Opens a run to be sent in parts: each `runSuite` names it in `part` (`{ runId,
   * firstIndex }`, the run's index of the call's first case), and `closeRun` ends it. The
   * server records the parts into one run and counts it once. Resolves with its id: empty
   * when the server does not record it (`record: false`, or its default off).
   */
  async openRun(request: DeepPartial<OpenRunRequest> = {}, options: CallOptions = {}): Promise<string> {
    const response = await this.unary<OpenRunResponse>(
      (md, opts, cb) => this.runStub.openRun(OpenRunRequest.fromPartial(request), md, opts, cb),
      options,
    );
    return response.runId;
  }

  /**
   * Ends a run opened with `openRun`: complete with `summary` (judged over every part,
   * e.g. `mergeSummaries`), or incomplete with `interrupted: true`. FAILED_PRECONDITION,
   * naming the run, when it has already ended (closed, or lapsed into incomplete).
   */
  async closeRun(request: DeepPartial<CloseRunRequest>, options: CallOptions = {}): Promise<void> {
    await this.unary(
      (md, opts, cb) => this.runStub.closeRun(CloseRunRequest.fromPartial(request), md, opts, cb),
      options,
    );
  }

  /**
   * Runs a suite over a batch of cases. Iterate the returned run for each case's result
   * (in completion order, each exactly once), then read `await run.summary()`.
   *
   * A batch of more than STREAM_CHUNK_CASES cases goes as a RunSuiteStream, its cases
   * in chunks of that many; the results, summary and errors are RunSuite's, with field
   * paths (`cases[1100].sample.expected_json`) counted from the batch's first case.
   */
  runSuite(request: DeepPartial<RunSuiteRequest>, options: CallOptions = {}): SuiteRun {
    const message = RunSuiteRequest.fromPartial(request);
    const metadata = options.metadata ?? new grpc.Metadata();
    const callOptions = this.callOptions(options, this.streamTimeoutMs);
    if (message.cases.length <= STREAM_CHUNK_CASES) {
      const call = this.stub.runSuite(message, metadata, callOptions);
      bindSignal(call, options.signal);
      return new SuiteRun(call);
    }
    const call = this.stub.runSuiteStream(metadata, callOptions);
    bindSignal(call, options.signal);
    const run = new SuiteRun(call);
    void sendInChunks(call, message);
    return run;
  }

  /**
   * Runs one large batch over several replicas: the request's cases are split into
   * chunks of consecutive cases (at least `shards`, at most `chunkCases` each, default
   * 5,000) sent as separate runSuite calls (so a chunk over STREAM_CHUNK_CASES is a
   * RunSuiteStream), `shards` at a time, over this client's channel, whose round_robin
   * policy (a name resolving to several addresses) or an L7 proxy spreads them over the
   * replicas.
   *
   * A chunk whose call fails with UNAVAILABLE or whose stream breaks (isRetryable) is sent
   * again whole, up to `chunkAttempts` (3) times in all; any other error rejects the run
   * and cancels the other chunks. A chunk's results count only once its summary has
   * arrived, so every case is reported exactly once, `index` its position in the
   * request's cases. A batch that fits one chunk is one runSuite, its summary the
   * server's as it is (its gate, generation spending, matrix and, with `record`, runId);
   * a request without cases (a suite document with its own, such as a checkllm suite
   * whose outputs the server generates) always runs as one chunk, and so does a checkllm
   * batch of recorded outputs (`format` SUITE_FORMAT_CHECKLLM, or any case naming its
   * `test`, `prompt` or `provider`) whatever `shards` and `chunkCases` say, with its
   * whole `budgetUsd`, since the server scores a checkllm batch only with every
   * combination present. Several chunks' summaries merge by counts and sums
   * (mergeSummaries: the generation spending and the matrix cells added too), the gate
   * is judged again on the merged totals and runId is empty (each chunk is recorded as a
   * run of its own: the result's `runIds` lists those runs' ids, in the order of the
   * chunks' cases). `budgetUsd`, when set, is divided among the chunks in proportion to
   * their cases. `options.timeoutMs`, when set, is the whole run's deadline;
   * `options.signal` cancels every chunk.
   */
  runSuiteSharded(
    request: DeepPartial<RunSuiteRequest>,
    shard: ShardOptions,
    options: CallOptions = {},
  ): Promise<ShardedResult> {
    return runSharded(this, request, shard, options);
  }

  /**
   * Opens a ScoreStream with `config` (the checks). `send` cases, `end()` when done, and
   * iterate the responses, which arrive in completion order with their `requestId`.
   */
  scoreStream(config: DeepPartial<StreamConfig>, options: CallOptions = {}): ScoreStream {
    const call = this.stub.scoreStream(
      options.metadata ?? new grpc.Metadata(),
      this.callOptions(options, this.streamTimeoutMs),
    );
    bindSignal(call, options.signal);
    return new ScoreStream(call, StreamConfig.fromPartial(config));
  }

  // Evaluation jobs (jobs.ts): a batch the server scores after its caller has gone. A job
  // that ends FAILED or CANCELLED is an answer (its `state` and `error`), not an error.
  // With bearer tokens on, a job is its tenant's: another tenant's is NOT_FOUND.

  /**
   * Creates a job scoring `cases` (as runSuite's `cases`, from an array, any iterable or
   * an async iterable) with `config`'s plan (`checks`, `compact`, or `suiteYaml` whose own
   * cases are not scored), `name`, `labels` and `webhookUrl`; `caseCount` is set to the
   * number of cases. The cases go JOB_CHUNK_CASES (500) and at most JOB_CHUNK_BYTES (4 MiB)
   * a message. Resolves with the job, QUEUED, once the server has stored it.
   *
   * Rejects with a ScorewireError: INVALID_ARGUMENT naming the check or case
   * (`cases[12].output`), RESOURCE_EXHAUSTED past the server's case limit or its open
   * jobs per tenant, FAILED_PRECONDITION naming `config.webhook_url` when the server has
   * no secret to sign webhooks with; nothing is stored then. Its default deadline is the
   * streams' (`streamTimeoutMs`).
   */
  async createJob(
    config: DeepPartial<JobConfig>,
    cases: Iterable<DeepPartial<Case>> | AsyncIterable<DeepPartial<Case>>,
    options: CallOptions = {},
  ): Promise<Job> {
    const all: Case[] = [];
    for await (const c of cases) all.push(Case.fromPartial(c));
    const first = { message: { $case: "config" as const, config: JobConfig.fromPartial({ ...config, caseCount: all.length }) } };
    const response = await new Promise<CreateJobResponse>((resolve, reject) => {
      const call = this.jobStub.createJob(
        options.metadata ?? new grpc.Metadata(),
        this.callOptions(options, this.streamTimeoutMs),
        (err, resp) => (err ? reject(toScorewireError(err)) : resolve(resp)),
      );
      bindSignal(call, options.signal);
      void writeJob(call, first, all);
    });
    return jobOf(response);
  }

  /**
   * A job: its state and progress, and once it succeeded its summary and aggregations.
   * NOT_FOUND for an unknown job (or another tenant's).
   */
  async getJob(jobId: string, options: CallOptions = {}): Promise<Job> {
    const response = await this.unary<GetJobResponse>(
      (md, opts, cb) => this.jobStub.getJob(GetJobRequest.fromPartial({ jobId }), md, opts, cb),
      options,
    );
    return jobOf(response);
  }

  /**
   * Cancels a queued or running job; resolves with it, CANCELLED. Its run ends incomplete
   * with what was recorded. FAILED_PRECONDITION naming `job_id` for a job that has ended.
   */
  async cancelJob(jobId: string, options: CallOptions = {}): Promise<Job> {
    const response = await this.unary<CancelJobResponse>(
      (md, opts, cb) => this.jobStub.cancelJob(CancelJobRequest.fromPartial({ jobId }), md, opts, cb),
      options,
    );
    return jobOf(response);
  }

  /**
   * The caller's jobs, newest first, filtered by `state`, without summaries or
   * aggregations (getJob has them): `for await` them. Pages of `pageSize` (1 to 1000; 0:
   * the server's 100) from `pageToken` on are fetched as the loop reaches them, each call
   * with the unary deadline.
   */
  async *listJobs(request: DeepPartial<ListJobsRequest> = {}, options: CallOptions = {}): AsyncGenerator<Job, void, undefined> {
    const page = ListJobsRequest.fromPartial(request);
    for (;;) {
      const response = await this.unary<ListJobsResponse>(
        (md, opts, cb) => this.jobStub.listJobs(page, md, opts, cb),
        options,
      );
      yield* response.jobs;
      if (response.nextPageToken === "") return;
      page.pageToken = response.nextPageToken;
    }
  }

  /**
   * A job as it is now, then at each change of its state or progress: `for await` it; the
   * loop ends after the job has ended (jobEnded). No deadline unless `options.timeoutMs`
   * is given (a job may run for hours); leaving the loop early cancels the call.
   */
  async *watchJob(jobId: string, options: CallOptions = {}): AsyncGenerator<Job, void, undefined> {
    const call = this.jobStub.watchJob(
      WatchJobRequest.fromPartial({ jobId }),
      options.metadata ?? new grpc.Metadata(),
      this.callOptions(options, Infinity),
    );
    bindSignal(call, options.signal);
    let failure: unknown;
    call.on("error", (err) => {
      failure ??= err;
    });
    let ended = false;
    try {
      for await (const message of call as AsyncIterable<WatchJobResponse>) yield jobOf(message);
      if (failure !== undefined) throw failure;
      ended = true;
    } catch (err) {
      throw toScorewireError(err);
    } finally {
      if (!ended) call.cancel();
    }
  }

  /**
   * Watches a job to its end and resolves with it: for a job that succeeded with its
   * `summary`, `aggregations` and `runId`; a FAILED job (with its `error`) or a CANCELLED
   * one too. No deadline unless `options.timeoutMs` is given.
   */
  async waitJob(jobId: string, options: CallOptions = {}): Promise<Job> {
    let last: Job | undefined;
    for await (const job of this.watchJob(jobId, options)) last = job;
    if (last === undefined || !jobEnded(last.state)) {
      throw new ScorewireError(grpc.status.INTERNAL, "WatchJob ended before the job did");
    }
    return last;
  }

  /** Resolves once the channel is connected; rejects with UNAVAILABLE when `timeoutMs` passes first. */
  waitForReady(timeoutMs: number = this.timeoutMs): Promise<void> {
    return new Promise((resolve, reject) => {
      this.stub.waitForReady(Date.now() + timeoutMs, (err) =>
        err ? reject(new ScorewireError(grpc.status.UNAVAILABLE, err.message, [], undefined, { cause: err })) : resolve(),
      );
    });
  }

  /**
   * An Observer sending production outputs to ObserveService over this client's channel,
   * in the background: observe() never blocks or throws. Close it before the client.
   */
  observer(options: ObserverOptions = {}): Observer {
    return new Observer(this.stub.getChannel(), options);
  }

  /** Closes the channel; calls in flight fail with CANCELLED or UNAVAILABLE. */
  close(): void {
    this.jobStub.close();
    this.runStub.close();
    this.labelStub.close();
    this.stub.close();
  }

  private callOptions(options: CallOptions, defaultTimeoutMs: number): Partial<grpc.CallOptions> {
    const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    return Number.isFinite(timeoutMs) ? { deadline: Date.now() + timeoutMs } : {};
  }

  private unary<T>(
    start: (
      metadata: grpc.Metadata,
      options: Partial<grpc.CallOptions>,
      callback: (err: grpc.ServiceError | null, response: T) => void,
    ) => grpc.ClientUnaryCall,
    options: CallOptions,
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      const call = start(
        options.metadata ?? new grpc.Metadata(),
        this.callOptions(options, this.timeoutMs),
        (err, response) => (err ? reject(toScorewireError(err)) : resolve(response)),
      );
      bindSignal(call, options.signal);
    });
  }
}

/** The job of a JobService response; a response without one is INTERNAL. */
function jobOf(response: { job: Job | undefined }): Job {
  if (response.job === undefined) throw new ScorewireError(grpc.status.INTERNAL, "JobService answered without a job");
  return response.job;
}

/** Cancels `call` when `signal` aborts (at once if it already has). */
function bindSignal(call: { cancel(): void }, signal: AbortSignal | undefined): void {
  if (signal === undefined) return;
  if (signal.aborted) call.cancel();
  else signal.addEventListener("abort", () => call.cancel(), { once: true });
}

/**
 * Writes a RunSuiteStream's requests: the config (the run without its cases, and how
 * many follow), the cases STREAM_CHUNK_CASES at a time, then the half-close. The cases
 * were converted at the call, as for RunSuite, so a bad one throws there; grpc-js
 * serializes one chunk at a time, once the transport (HTTP/2 flow control) has taken the
 * previous one (or, until the call's first response and while the chunks fit, the
 * retry buffer has: see channelOptionsFor), and this waits for 'drain' whenever the
 * stream's buffer (16 messages) is full. It stops once the call has ended (a refusal,
 * the deadline, a cancel), whose status the SuiteRun reports. Never rejects.
 */
async function sendInChunks(
  call: grpc.ClientDuplexStream<RunSuiteStreamRequest, RunSuiteStreamResponse>,
  request: RunSuiteRequest,
): Promise<void> {
  let ended = false;
  const status = new Promise<void>((resolve) =>
    call.once("status", () => {
      ended = true;
      resolve();
    }),
  );
  const { cases } = request;
  call.write({
    message: { $case: "config", config: { request: { ...request, cases: [] }, caseCount: cases.length } },
  });
  for (let start = 0; start < cases.length && !ended; start += STREAM_CHUNK_CASES) {
    const chunk = cases.slice(start, start + STREAM_CHUNK_CASES);
    if (!call.write({ message: { $case: "cases", cases: { cases: chunk } } })) {
      await Promise.race([new Promise((resolve) => call.once("drain", resolve)), status]);
    }
  }
  if (!ended) call.end();
}

/** A RunSuite call, or a RunSuiteStream one: their responses have the same fields. */
type SuiteCall =
  | grpc.ClientReadableStream<RunSuiteResponse>
  | grpc.ClientDuplexStream<RunSuiteStreamRequest, RunSuiteStreamResponse>;

/**
 * One RunSuite (or, for a batch over STREAM_CHUNK_CASES cases, RunSuiteStream) call: an
 * async iterable of case results (iterable once) and its summary. Leaving the iteration
 * early (break, throw) cancels the call.
 */
export class SuiteRun implements AsyncIterable<CaseResult> {
  private readonly call: SuiteCall;
  private started = false;
  /** The call's error, once it has failed: it may fail before the iteration starts. */
  private failure: unknown;
  private readonly done: Promise<RunSummary>;
  private settle!: { resolve: (s: RunSummary) => void; reject: (e: ScorewireError) => void };

  constructor(call: SuiteCall) {
    this.call = call;
    // Errors surface through iteration; without a listener an 'error' event would crash.
    // grpc-js emits 'error' and ends the stream: an iteration started after both sees a
    // stream that merely ended, so the error is kept for it.
    call.on("error", (err) => {
      this.failure ??= err;
    });
    this.done = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.done.catch(noop); // Rejections are seen by summary() callers, never unhandled.
  }

  [Symbol.asyncIterator](): AsyncIterator<CaseResult> {
    if (this.started) throw new Error("a SuiteRun can be iterated only once");
    this.started = true;
    return this.iterate();
  }

  /**
   * The run's summary, once the stream has ended. When nobody iterates the run, this
   * drains (and drops) the results itself. Rejects with the call's ScorewireError.
   */
  async summary(): Promise<RunSummary> {
    if (!this.started) {
      for await (const _ of this) {
        // Drain: the caller only wants the totals.
      }
    }
    return this.done;
  }

  /** Every result (in arrival order) and the summary. */
  async collect(): Promise<{ results: CaseResult[]; summary: RunSummary }> {
    const results: CaseResult[] = [];
    for await (const r of this) results.push(r);
    return { results, summary: await this.done };
  }

  /** Cancels the call; iteration then fails with CANCELLED. */
  cancel(): void {
    this.call.cancel();
  }

  private async *iterate(): AsyncGenerator<CaseResult, void, undefined> {
    let summary: RunSummary | undefined;
    let ended = false;
    try {
      for await (const message of this.call as AsyncIterable<RunSuiteResponse>) {
        const event = message.event;
        if (event?.$case === "results") yield* event.results.results;
        else if (event?.$case === "summary") summary = event.summary;
      }
      if (this.failure !== undefined) throw this.failure;
      ended = true;
    } catch (err) {
      const error = toScorewireError(err);
      this.settle.reject(error);
      throw error;
    } finally {
      if (!ended) {
        this.call.cancel();
        this.settle.reject(new ScorewireError(grpc.status.CANCELLED, "the run was left before its summary"));
      }
    }
    if (summary === undefined) {
      const error = new ScorewireError(grpc.status.INTERNAL, "the stream ended without a summary");
      this.settle.reject(error);
      throw error;
    }
    this.settle.resolve(summary);
  }
}

/**
 * One ScoreStream call. The config goes first, automatically; then `send` cases and
 * `end()` the request side. Iterate (once) for the responses.
 */
export class ScoreStream implements AsyncIterable<ScoreStreamResponse> {
  private readonly call: grpc.ClientDuplexStream<ScoreStreamRequest, ScoreStreamResponse>;
  private started = false;
  /** The call's error, once it has failed: it may fail before the iteration starts. */
  private failure: unknown;

  constructor(call: grpc.ClientDuplexStream<ScoreStreamRequest, ScoreStreamResponse>, config: StreamConfig) {
    this.call = call;
    // Errors surface through iteration. grpc-js emits 'error' and ends the stream: an
    // iteration started after both sees a stream that merely ended, so the error is kept.
    call.on("error", (err) => {
      this.failure ??= err;
    });
    call.write(ScoreStreamRequest.fromPartial({ message: { $case: "config", config } }));
  }

  /**
   * Sends one case. The promise resolves once the message is handed to the transport,
   * so awaiting it applies backpressure; failures surface through iteration instead.
   */
  send(streamCase: DeepPartial<StreamCase>): Promise<void> {
    const request = ScoreStreamRequest.fromPartial({
      message: { $case: "case", case: StreamCase.fromPartial(streamCase) },
    });
    return new Promise((resolve) => {
      this.call.write(request, () => resolve());
    });
  }

  /** Says no more cases follow; the server then finishes the ones in flight. */
  end(): void {
    this.call.end();
  }

  /** Cancels the call; iteration then fails with CANCELLED. */
  cancel(): void {
    this.call.cancel();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ScoreStreamResponse> {
    if (this.started) throw new Error("a ScoreStream can be iterated only once");
    this.started = true;
    let ended = false;
    try {
      yield* this.call as AsyncIterable<ScoreStreamResponse>;
      if (this.failure !== undefined) throw this.failure;
      ended = true;
    } catch (err) {
      throw toScorewireError(err);
    } finally {
      if (!ended) this.call.cancel();
    }
  }
}
