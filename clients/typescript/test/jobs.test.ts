// The evaluation-job calls of the TypeScript client against a real server (see live.ts).
// Each test names its jobs uniquely; waits carry a deadline, so a job that never ends
// fails the test instead of hanging it.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";

import {
  type DeepPartial,
  JOB_CHUNK_BYTES,
  type Job,
  type JobConfig,
  JobState,
  ScorewireError,
  Status,
  jobChunks,
  jobEnded,
} from "../src";
import { Case } from "../src/gen/scorewire/v1/scoring";
import { useLiveServer } from "./live";

const TIMEOUT = { timeout: 120_000 };
const WAIT = { timeoutMs: 60_000 };
/** A job still open when it is cancelled right after it is created: seconds of scoring, against one round trip. */
const LONG_CASES = 50_000;

const live = useLiveServer(TIMEOUT);

/** `n` plain cases; every fourth output (index divisible by 4) lacks "Paris". */
function cases(n: number): { sample: { id: string }; output: { text: string } }[] {
  return Array.from({ length: n }, (_, i) => ({
    sample: { id: `s${i}` },
    output: { text: i % 4 === 0 ? "Lyon" : `Paris ${i}` },
  }));
}

function unique(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 12)}`;
}

/** Asserts `err` is a ScorewireError with `code` naming `field`. */
function assertRefused(err: unknown, code: Status, field: string): true {
  assert.ok(err instanceof ScorewireError, `not a ScorewireError: ${String(err)}`);
  assert.equal(err.code, code, `${err.codeName}: ${err.details}`);
  assert.ok(
    err.fieldViolations.some((v) => v.field === field),
    `${field} not among ${JSON.stringify(err.fieldViolations)}`,
  );
  return true;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("job messages (no server)", () => {
  test("1201 small cases go 500 + 500 + 201 a message", () => {
    const chunks = jobChunks(cases(1201).map((c) => Case.fromPartial(c)));
    assert.deepEqual(
      chunks.map((c) => c.length),
      [500, 500, 201],
    );
  });

  test("large cases go within 4 MiB a message, a larger one alone, in order", () => {
    const mib = 1024 * 1024;
    const texts = ["a".repeat(1.5 * mib), "a".repeat(1.5 * mib), "a".repeat(1.5 * mib), "b".repeat(5 * mib), "c"];
    const chunks = jobChunks(texts.map((text) => Case.fromPartial({ output: { text } })));
    assert.deepEqual(
      chunks.map((c) => c.length),
      [2, 1, 1, 1],
    );
    assert.ok(chunks[0]!.reduce((n, c) => n + Case.encode(c).finish().length, 0) <= JOB_CHUNK_BYTES);
    assert.equal(chunks.flat().map((c) => c.output!.text[0]).join(""), "aaabc");
  });
});

describe("JobService", () => {
  test("a job from plain cases is watched to SUCCEEDED with aggregations and its run", TIMEOUT, async () => {
    // 600 cases: two messages; progress only grows; the end has the aggregations
    const name = unique("ts-job");
    const job = await live.client.createJob(
      {
        checks: [{ name: "has_paris", type: "contains", params: { needles: ["Paris"] } }],
        compact: ["length:1..20"],
        name,
        labels: { team: "qa" },
      },
      cases(600),
    );
    assert.deepEqual([job.state, job.casesTotal, job.name], [JobState.JOB_STATE_QUEUED, 600, name]);
    const seen = await collect(live.client.watchJob(job.jobId, WAIT));
    const done = seen.map((j) => j.casesDone);
    assert.deepEqual(done, [...done].sort((a, b) => a - b));
    assert.deepEqual(
      seen.map((j) => j.state),
      seen.map((j) => j.state).sort((a, b) => a - b),
    );
    const end = seen.at(-1)!;
    assert.deepEqual([end.state, end.casesDone], [JobState.JOB_STATE_SUCCEEDED, 600]);
    assert.deepEqual(
      end.aggregations.map((a) => a.name),
      ["has_paris", "length:1..20"],
    );
    const paris = end.aggregations[0]!;
    assert.deepEqual([paris.count, paris.average, paris.median], [600, 0.75, 1]);
    assert.equal(end.summary?.casesPassed, 450);
    const run = await live.client.getRun(end.runId);
    assert.deepEqual([run.name, run.labels.team, run.results], [name, "qa", 600]);
    // waiting on a job that has ended answers at once, with the same job
    const waited = await live.client.waitJob(job.jobId, WAIT);
    assert.deepEqual(waited, await live.client.getJob(job.jobId));
  });

  test("createJob takes an async iterable of cases", TIMEOUT, async () => {
    async function* produce() {
      for (const c of cases(8)) yield c;
    }
    const job = await live.client.createJob({ compact: ["contains:Paris"] }, produce());
    const end = await live.client.waitJob(job.jobId, WAIT);
    assert.equal(end.state, JobState.JOB_STATE_SUCCEEDED);
    assert.equal(end.aggregations[0]?.average, 0.75);
  });

  test("a long job is cancelled and ends CANCELLED; cancelling it again is refused", TIMEOUT, async () => {
    const all = Array.from({ length: LONG_CASES }, () => ({ output: { text: "Paris" } }));
    const job = await live.client.createJob({ compact: ["contains:Paris"] }, all);
    const cancelled = await live.client.cancelJob(job.jobId);
    assert.equal(cancelled.state, JobState.JOB_STATE_CANCELLED);
    const end = await live.client.waitJob(job.jobId, WAIT);
    assert.equal(end.state, JobState.JOB_STATE_CANCELLED);
    assert.ok(end.casesDone < LONG_CASES, `${end.casesDone} cases done`);
    await assert.rejects(live.client.cancelJob(job.jobId), (err) =>
      assertRefused(err, Status.FAILED_PRECONDITION, "job_id"),
    );
  });

  test("jobs are listed newest first, page by page, and by state", TIMEOUT, async () => {
    // page size 1: three jobs can only be found over three pages or more
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await live.client.createJob({ compact: ["contains:Paris"] }, cases(2))).jobId);
    const found: string[] = [];
    for await (const job of live.client.listJobs({ pageSize: 1 })) {
      if (ids.includes(job.jobId)) found.push(job.jobId);
      if (found.length === ids.length) break;
    }
    assert.deepEqual(found, [...ids].reverse());
    for (const id of ids) await live.client.waitJob(id, WAIT);
    const succeeded = await collect(live.client.listJobs({ state: JobState.JOB_STATE_SUCCEEDED, pageSize: 1000 }));
    assert.ok(succeeded.every((j: Job) => j.state === JobState.JOB_STATE_SUCCEEDED));
    for (const id of ids) assert.ok(succeeded.some((j) => j.jobId === id), `${id} not listed as succeeded`);
    await assert.rejects(collect(live.client.listJobs({ pageSize: 5000 })), (err) =>
      assertRefused(err, Status.INVALID_ARGUMENT, "page_size"),
    );
  });

  const refusals: [string, DeepPartial<JobConfig>, Status, string][] = [
    [
      "a webhook on a server with no secret to sign it",
      { compact: ["contains:Paris"], webhookUrl: "http://127.0.0.1:1/hook" },
      Status.FAILED_PRECONDITION,
      "config.webhook_url",
    ],
    [
      "a parameter the check does not have",
      { checks: [{ type: "contains", params: { needlez: ["Paris"] } }] },
      Status.INVALID_ARGUMENT,
      "checks[0].params.needlez",
    ],
  ];
  for (const [what, config, code, field] of refusals) {
    test(`a refused job names its field and is not stored: ${what}`, TIMEOUT, async () => {
      // 50,000 cases: the server refuses while they are still being written
      const name = unique("ts-refused");
      const all = Array.from({ length: LONG_CASES }, () => ({ output: { text: "Paris" } }));
      await assert.rejects(live.client.createJob({ ...config, name }, all), (err) => assertRefused(err, code, field));
      const listed = await collect(live.client.listJobs({ pageSize: 1000 }));
      assert.ok(!listed.some((j) => j.name === name), "the refused job was stored");
    });
  }

  test("an unknown job is NOT_FOUND", TIMEOUT, async () => {
    for (const call of [
      () => live.client.getJob("job_missing"),
      () => live.client.cancelJob("job_missing"),
      () => live.client.waitJob("job_missing", WAIT),
    ]) {
      await assert.rejects(call, (err) => assertRefused(err, Status.NOT_FOUND, "job_id"));
    }
  });

  test("jobEnded is true for the three terminal states only", () => {
    const ended = Object.values(JobState).filter((s): s is JobState => typeof s === "number" && jobEnded(s));
    assert.deepEqual(ended, [JobState.JOB_STATE_SUCCEEDED, JobState.JOB_STATE_FAILED, JobState.JOB_STATE_CANCELLED]);
  });
});

