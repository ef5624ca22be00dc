// Evaluation jobs: what ScorewireClient's job calls share. A job is a batch the server
// scores after its caller has gone: createJob resolves with the job (QUEUED) once the
// server has stored it and every case; watchJob yields it at each change of state or
// progress until it ends; waitJob resolves with that last one, which for a job that
// succeeded carries the summary, the per-check aggregations and the runId of its
// recorded run. A job that ends FAILED or CANCELLED is an answer, not an error.
import type * as grpc from "@grpc/grpc-js";

import { Case } from "./gen/scorewire/v1/scoring";
import { type CreateJobRequest, JobState } from "./gen/scorewire/v1/jobs";

/** The most cases createJob sends in one message, as runSuite's STREAM_CHUNK_CASES. */
export const JOB_CHUNK_CASES = 500;

/**
 * The most bytes of cases createJob sends in one message (a larger case goes alone). The
 * server bounds the whole stream by its message limit and refuses more naming `cases`;
 * bounding each message keeps a batch of large cases within the channel's message limit
 * until the server has said so.
 */
export const JOB_CHUNK_BYTES = 4 * 1024 * 1024;

/** Whether a job in `state` has ended (SUCCEEDED, FAILED or CANCELLED): watchJob's last state. */
export function jobEnded(state: JobState): boolean {
  return state === JobState.JOB_STATE_SUCCEEDED || state === JobState.JOB_STATE_FAILED || state === JobState.JOB_STATE_CANCELLED;
}

/**
 * The cases cut into runs of at most JOB_CHUNK_CASES cases and JOB_CHUNK_BYTES encoded
 * bytes (a larger case alone), in order.
 */
export function jobChunks(cases: readonly Case[]): Case[][] {
  const chunks: Case[][] = [];
  let chunk: Case[] = [];
  let size = 0;
  for (const c of cases) {
    const n = Case.encode(c).finish().length;
    if (chunk.length > 0 && (chunk.length === JOB_CHUNK_CASES || size + n > JOB_CHUNK_BYTES)) {
      chunks.push(chunk);
      chunk = [];
      size = 0;
    }
    chunk.push(c);
    size += n;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * Writes a CreateJob's requests: the config, the cases in jobChunks, then the half-close,
 * waiting for 'drain' whenever the stream's buffer is full. It stops once the call has
 * ended (a refusal, the deadline, a cancel), whose status the call's callback reports.
 * Never rejects.
 */
export async function writeJob(
  call: grpc.ClientWritableStream<CreateJobRequest>,
  config: CreateJobRequest,
  cases: readonly Case[],
): Promise<void> {
  let ended = false;
  const status = new Promise<void>((resolve) =>
    call.once("status", () => {
      ended = true;
      resolve();
    }),
  );
  call.on("error", () => {}); // the callback reports it
  call.write(config);
  for (const chunk of jobChunks(cases)) {
    if (ended) return;
    if (!call.write({ message: { $case: "cases", cases: { cases: chunk } } })) {
      await Promise.race([new Promise((resolve) => call.once("drain", resolve)), status]);
    }
  }
  if (!ended) call.end();
}
