/**
 * One large RunSuite batch over several replicas: `ScorewireClient.runSuiteSharded`, with
 * the Go client's RunSuiteSharded semantics (and the Python client's `shards=N`).
 */
import * as grpc from "@grpc/grpc-js";

import type { CallOptions, ScorewireClient } from "./client";
import { ScorewireError, toScorewireError } from "./errors";
import {
  type CaseResult,
  type DeepPartial,
  RunSuiteRequest,
  type RunSummary,
  SuiteFormat,
} from "./gen/scorewire/v1/scoring";
import { mergeSummaries } from "./summary";

/** The most cases in one chunk (one runSuite call) unless `chunkCases` says otherwise. */
export const DEFAULT_CHUNK_CASES = 5000;
/** How many times a chunk is sent, the first included, before the run fails. */
export const DEFAULT_CHUNK_ATTEMPTS = 3;

/** How runSuiteSharded splits a batch. */
export interface ShardOptions {
  /**
   * How many chunks are in flight at once (at least 1); the batch is split into at least
   * this many chunks, but for a checkllm batch or a request without cases, which is one
   * chunk (see runSuiteSharded).
   */
  shards: number;
  /** The most cases in one chunk; unset or 0 means DEFAULT_CHUNK_CASES. */
  chunkCases?: number;
  /** How many times a chunk is sent in all; unset or 0 means DEFAULT_CHUNK_ATTEMPTS. */
  chunkAttempts?: number;
  /**
   * Receives each chunk's results as the chunk finishes (one call at a time), indexes
   * already those of the request's cases. A throw fails the run.
   */
  onChunk?: (results: CaseResult[]) => void;
}

/** A batch run as chunks: every case's result once, and the merged summary. */
export interface ShardedResult {
  /**
   * One result per case, chunk by chunk in completion order; `index` is the case's
   * position in the request's `cases`.
   */
  results: CaseResult[];
  /**
   * The chunks' summaries merged (mergeSummaries): one chunk's summary as the server sent
   * it (its runId, generation spending and matrix included), or several added up, the
   * gate judged again on the merged totals and runId empty.
   */
  summary: RunSummary;
  /**
   * The ids of the runs the server recorded for the batch (with `record`), one per chunk,
   * in the order of the chunks' cases (by their offset in the request's `cases`, not
   * completion order): read each back with getRun or listRunResults, since the merged
   * summary of several chunks has no runId. Empty when nothing was recorded; for a batch
   * sent as one chunk, exactly `summary.runId`.
   */
  runIds: string[];
  /** Chunk attempts that failed and were sent again. */
  retries: number;
}

/** Consecutive cases of the caller's request, from `offset`. */
export interface Chunk {
  readonly offset: number;
  readonly request: RunSuiteRequest;
}

/** See ScorewireClient.runSuiteSharded. */
export async function runSharded(
  client: ScorewireClient,
  request: DeepPartial<RunSuiteRequest>,
  shard: ShardOptions,
  options: CallOptions,
): Promise<ShardedResult> {
  const chunks = splitChunks(RunSuiteRequest.fromPartial(request), shard);
  const attempts =
    shard.chunkAttempts !== undefined && shard.chunkAttempts > 0 ? shard.chunkAttempts : DEFAULT_CHUNK_ATTEMPTS;
  // One signal for every chunk: the caller's abort, or the first chunk that fails for good.
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  if (options.signal?.aborted) abort();
  else options.signal?.addEventListener("abort", abort, { once: true });
  // timeoutMs, when set, is the whole run's deadline; unset, each call has the client's.
  const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
  const results: CaseResult[] = [];
  const summaries: RunSummary[] = [];
  const runIdByOffset = new Map<number, string>();
  let retries = 0;
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown): void => {
    failure ??= { error };
    controller.abort();
  };

  const runOnce = async (chunk: Chunk): Promise<{ results: CaseResult[]; summary: RunSummary }> => {
    const callOptions: CallOptions = { ...options, signal: controller.signal };
    if (deadline !== undefined) callOptions.timeoutMs = Math.max(0, deadline - Date.now());
    const done = await client.runSuite(chunk.request, callOptions).collect();
    for (const r of done.results) r.index += chunk.offset;
    return done;
  };
  // Sends one chunk until it succeeds, fails for good or runs out of attempts.
  const runChunk = async (chunk: Chunk): Promise<{ results: CaseResult[]; summary: RunSummary }> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await runOnce(chunk);
      } catch (err) {
        if (attempt >= attempts || controller.signal.aborted || !isRetryable(err)) throw toScorewireError(err);
        retries++;
      }
    }
  };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (failure === undefined && !controller.signal.aborted && next < chunks.length) {
      const chunk = chunks[next++]!;
      let done: { results: CaseResult[]; summary: RunSummary };
      try {
        done = await runChunk(chunk);
      } catch (err) {
        fail(err);
        return;
      }
      if (failure !== undefined) return;
      results.push(...done.results);
      summaries.push(done.summary);
      if (done.summary.runId !== "") runIdByOffset.set(chunk.offset, done.summary.runId);
      try {
        shard.onChunk?.(done.results);
      } catch (err) {
        fail(err);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(shard.shards, chunks.length) }, worker));
  } finally {
    options.signal?.removeEventListener("abort", abort);
  }
  if (failure !== undefined) throw failure.error;
  if (controller.signal.aborted) throw new ScorewireError(grpc.status.CANCELLED, "the sharded run was cancelled");
  const runIds = chunks.flatMap((c) => {
    const id = runIdByOffset.get(c.offset);
    return id === undefined ? [] : [id];
  });
  return { results, summary: mergeSummaries(summaries), runIds, retries };
}

/** What gRPC transports say when they lost a stream, as opposed to a status the server chose (the Go client's list). */
const BROKEN_STREAM = ["RST_STREAM", "Stream removed", "without sending trailers", "ended without a summary"];

/**
 * Whether a chunk that failed with `err` is worth sending to another replica:
 * UNAVAILABLE, or INTERNAL/UNKNOWN when the transport lost the stream (a replica killed
 * behind nginx shows as INTERNAL "RST_STREAM", behind HAProxy as UNKNOWN "Stream
 * removed"; grpc-js says "Received RST_STREAM with code ...").
 */
export function isRetryable(err: unknown): boolean {
  if (!(err instanceof ScorewireError)) return false;
  switch (err.code) {
    case grpc.status.UNAVAILABLE:
      return true;
    case grpc.status.INTERNAL:
    case grpc.status.UNKNOWN:
      return BROKEN_STREAM.some((mark) => err.details.includes(mark));
    default:
      return false;
  }
}

/**
 * Cuts the request's cases into consecutive chunks: at least `shards` of them (fewer only
 * when there are fewer cases), at most `chunkCases` cases each, each with its share of
 * `budgetUsd`. A request without cases, or a checkllm batch (isWholeBatch), is one chunk,
 * the request itself. Exported for the tests, not from the package.
 */
export function splitChunks(request: RunSuiteRequest, shard: ShardOptions): Chunk[] {
  if (!Number.isInteger(shard.shards) || shard.shards < 1) {
    throw new RangeError(`scorewire: ShardOptions.shards must be an integer of at least 1, not ${shard.shards}`);
  }
  if (isWholeBatch(request)) return [{ offset: 0, request }];
  const size = shard.chunkCases !== undefined && shard.chunkCases > 0 ? shard.chunkCases : DEFAULT_CHUNK_CASES;
  const n = request.cases.length;
  const count = Math.max(Math.min(shard.shards, n), Math.ceil(n / size), 1);
  const per = Math.max(Math.ceil(n / count), 1);
  const chunks: Chunk[] = [];
  for (let offset = 0; offset < Math.max(n, 1); offset += per) {
    const cases = request.cases.slice(offset, offset + per);
    const part: RunSuiteRequest = { ...request, cases };
    if (request.budgetUsd !== undefined && n > 0) part.budgetUsd = (request.budgetUsd * cases.length) / n;
    chunks.push({ offset, request: part });
  }
  return chunks;
}

/**
 * Whether the request is a checkllm batch, which the server scores only with every
 * prompt x provider x test combination present (a part of one is INVALID_ARGUMENT
 * "cases: no case for ..."): its `format` is SUITE_FORMAT_CHECKLLM, or one of its cases
 * names a combination (a `test`, `prompt` or `provider`).
 */
function isWholeBatch(request: RunSuiteRequest): boolean {
  return (
    request.format === SuiteFormat.SUITE_FORMAT_CHECKLLM ||
    request.cases.some((c) => c.test !== "" || c.prompt !== "" || c.provider !== "")
  );
}
