// Tests of runSuiteSharded's chunk retries, cancellation and budget split against an
// in-process fake ScoringService whose RunSuite fails chosen chunks as a lost replica
// does (the live server never does), as retry.test.ts tests the channel's own retries.
import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, test } from "node:test";

import * as grpc from "@grpc/grpc-js";

import {
  type CaseResult,
  type DeepPartial,
  type RunSuiteRequest,
  RunSuiteResponse,
  ScorewireClient,
  ScorewireError,
  type ScoringServiceServer,
  Status,
} from "../src";
import { type FakeServer, startFake } from "./fake";

const TIMEOUT = { timeout: 30_000 };

/** How the fake answers one attempt of a chunk instead of running it. */
interface Refusal {
  code: Status;
  details: string;
  /** Send the chunk's first result before the status: gRPC's own retry has then given up on the call. */
  afterFirstResult?: boolean;
}

/**
 * A fake ScoringService whose RunSuite knows a chunk by its first case's sample id (""
 * for none): it fails a chunk's first attempts as `refusals` say, leaves the chunks in
 * `held` unanswered until cancelled, and runs every other call: one passing result per
 * case (index in the chunk, as the server counts) and the summary.
 */
class FakeChunks {
  readonly refusals = new Map<string, Refusal[]>();
  readonly held = new Set<string>();
  /** Refusals wait for this first (say, for the held chunks to arrive). */
  before: Promise<void> = Promise.resolve();
  /** How long each answer takes. */
  delayMs = 0;
  readonly calls = new Map<string, number>();
  readonly requests: RunSuiteRequest[] = [];
  readonly arrived: string[] = [];
  readonly cancelled: string[] = [];

  runSuite(call: grpc.ServerWritableStream<RunSuiteRequest, RunSuiteResponse>): void {
    const { request } = call;
    const key = request.cases[0]?.sample?.id ?? "";
    const attempt = (this.calls.get(key) ?? 0) + 1;
    this.calls.set(key, attempt);
    this.requests.push(request);
    this.arrived.push(key);
    call.on("cancelled", () => this.cancelled.push(key));
    if (this.held.has(key)) return;
    const refusal = this.refusals.get(key)?.[attempt - 1];
    if (refusal === undefined) {
      setTimeout(() => answer(call), this.delayMs);
      return;
    }
    void this.before.then(() => {
      if (refusal.afterFirstResult) call.write(batch(request.cases.slice(0, 1).map(result)));
      call.emit("error", { code: refusal.code, details: refusal.details });
    });
  }
}

/** A passing result of the case at `index` in its chunk. */
function result(c: RunSuiteRequest["cases"][number], index: number): DeepPartial<CaseResult> {
  return { index, sampleId: c.sample?.id ?? "", passed: true, scores: [{ name: "fake", passed: true, value: 1 }] };
}

function batch(results: DeepPartial<CaseResult>[]): RunSuiteResponse {
  return RunSuiteResponse.fromPartial({ event: { $case: "results", results: { results } } });
}

/** Runs a chunk: its results, then a summary of one check that passed every case. */
function answer(call: grpc.ServerWritableStream<RunSuiteRequest, RunSuiteResponse>): void {
  const n = call.request.cases.length;
  call.write(batch(call.request.cases.map(result)));
  const check = { name: "fake", type: "fake", passed: n, valueSum: n, meanValue: n ? 1 : 0 };
  const summary = { cases: n, casesPassed: n, passed: n, valueSum: n, checks: [check], gate: { maxErrorRate: 0 } };
  call.write(RunSuiteResponse.fromPartial({ event: { $case: "summary", summary } }));
  call.end();
}

const unimplemented = (_call: unknown, callback?: (err: Partial<grpc.StatusObject>) => void): void =>
  callback?.({ code: Status.UNIMPLEMENTED, details: "not in this fake" });

/** `n` cases `case-0` ... */
function cases(n: number): { sample: { id: string }; output: { text: string } }[] {
  return Array.from({ length: n }, (_, i) => ({ sample: { id: `case-${i}` }, output: { text: `o${i}` } }));
}

/** Asserts `results` hold each of `n` cases once, `index` their position in the request. */
function assertEachCaseOnce(results: CaseResult[], n: number): void {
  assert.deepEqual(
    results.map((r) => r.index).sort((a, b) => a - b),
    Array.from({ length: n }, (_, i) => i),
  );
  for (const r of results) assert.equal(r.sampleId, `case-${r.index}`);
}

/** Asserts `err` is a ScorewireError with `code`. */
function expectCode(err: unknown, code: Status): void {
  assert.ok(err instanceof ScorewireError, `not a ScorewireError: ${String(err)}`);
  assert.equal(err.code, code, `${err.codeName}: ${err.details}`);
}

/** Waits until `ready()` holds, for at most 5 s. */
async function eventually(ready: () => boolean, what: string): Promise<void> {
  for (const start = Date.now(); !ready(); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() - start > 5_000) assert.fail(`not within 5 s: ${what}`);
  }
}

let server: FakeServer;
let fake: FakeChunks;
let client: ScorewireClient;

before(async () => {
  server = await startFake({
    runSuite: (call) => fake.runSuite(call),
    runSuiteStream: (call) => call.emit("error", { code: Status.UNIMPLEMENTED }),
    scoreStream: (call) => call.emit("error", { code: Status.UNIMPLEMENTED }),
    score: unimplemented,
    listChecks: unimplemented,
    validateSuite: unimplemented,
  } satisfies ScoringServiceServer);
});

after(() => server.stop());

beforeEach(() => {
  fake = new FakeChunks();
  client = new ScorewireClient(server.address, { streamTimeoutMs: 10_000 });
});

afterEach(() => client.close());

test("a chunk whose stream broke is sent again whole, and its cases are reported once", TIMEOUT, async () => {
  // 10 cases, chunks of at most 3: case-0.., case-3.., case-6.., case-9. Each of the
  // first three is lost once the way a replica is: none is a code gRPC's own retry
  // would resend (INTERNAL, UNKNOWN) or it comes after the first result (UNAVAILABLE).
  fake.refusals.set("case-0", [{ code: Status.UNAVAILABLE, details: "Connection dropped", afterFirstResult: true }]);
  fake.refusals.set("case-3", [{ code: Status.INTERNAL, details: "Received RST_STREAM with code 2 (Internal server error)" }]);
  fake.refusals.set("case-6", [
    { code: Status.UNKNOWN, details: "Stream removed", afterFirstResult: true },
    { code: Status.INTERNAL, details: "stream terminated by RST_STREAM with error code: INTERNAL_ERROR" },
  ]);
  const chunks: number[][] = [];
  const got = await client.runSuiteSharded(
    { compact: ["contains:o"], cases: cases(10) },
    { shards: 3, chunkCases: 3, onChunk: (results) => chunks.push(results.map((r) => r.index)) },
  );
  assert.deepEqual(Object.fromEntries(fake.calls), { "case-0": 2, "case-3": 2, "case-6": 3, "case-9": 1 });
  assert.equal(got.retries, 4);
  assertEachCaseOnce(got.results, 10);
  assert.equal(chunks.length, 4);
  assert.deepEqual(chunks.flat(), got.results.map((r) => r.index));
  // Every resend was the chunk, whole.
  for (const r of fake.requests) {
    const first = Number(r.cases[0]!.sample!.id.slice("case-".length));
    assert.deepEqual(
      r.cases.map((c) => c.sample?.id),
      cases(10)
        .slice(first, first + 3)
        .map((c) => c.sample.id),
    );
  }
  assert.equal(got.summary.cases, 10);
  assert.equal(got.summary.passRate, 1);
  assert.equal(got.summary.checks[0]?.passed, 10);
  assert.equal(got.summary.gatePassed, true);
});

test("a chunk refused UNAVAILABLE until gRPC's own retry gives up is sent again", TIMEOUT, async () => {
  // Trailers-only UNAVAILABLE: the channel resends it itself, 3 attempts in all; then the chunk's retry does.
  const refused = { code: Status.UNAVAILABLE, details: "refused by the fake" };
  fake.refusals.set("case-0", [refused, refused, refused]);
  const got = await client.runSuiteSharded({ compact: ["contains:o"], cases: cases(4) }, { shards: 2 });
  assert.deepEqual(Object.fromEntries(fake.calls), { "case-0": 4, "case-2": 1 });
  assert.equal(got.retries, 1);
  assertEachCaseOnce(got.results, 4);
});

test("a chunk still failing after chunkAttempts fails the run", TIMEOUT, async () => {
  const lost = { code: Status.UNAVAILABLE, details: "Connection dropped", afterFirstResult: true };
  fake.refusals.set("case-2", [lost, lost, lost]);
  const err = await client
    .runSuiteSharded({ compact: ["contains:o"], cases: cases(4) }, { shards: 2, chunkAttempts: 2 })
    .then(
      () => assert.fail("a chunk that never finished succeeded"),
      (e: unknown) => e,
    );
  expectCode(err, Status.UNAVAILABLE);
  assert.equal(fake.calls.get("case-2"), 2);
});

test("an error that is not a lost stream is not retried and cancels the other chunks", TIMEOUT, async () => {
  const refusals: Refusal[] = [
    { code: Status.INTERNAL, details: "internal error" },
    { code: Status.RESOURCE_EXHAUSTED, details: "Received RST_STREAM: not a lost stream under this code" },
  ];
  for (const refusal of refusals) {
    // case-0 fails once case-3 and case-6 (held, never answered) are in flight; case-9 is never sent.
    fake = new FakeChunks();
    fake.refusals.set("case-0", [refusal]);
    fake.held.add("case-3").add("case-6");
    fake.before = eventually(() => fake.arrived.length === 3, "three chunks in flight");
    const start = Date.now();
    const err = await client
      .runSuiteSharded({ compact: ["contains:o"], cases: cases(10) }, { shards: 3, chunkCases: 3 })
      .then(
        () => assert.fail("a failed chunk succeeded"),
        (e: unknown) => e,
      );
    expectCode(err, refusal.code);
    assert.ok(Date.now() - start < 5_000, "the run waited for the held chunks");
    await eventually(() => fake.cancelled.length >= 2, "the held chunks cancelled");
    assert.deepEqual(fake.cancelled.filter((k) => k !== "case-0").sort(), ["case-3", "case-6"]);
    assert.deepEqual(Object.fromEntries(fake.calls), { "case-0": 1, "case-3": 1, "case-6": 1 });
  }
});

test("the caller's signal cancels every chunk", TIMEOUT, async () => {
  fake.held.add("case-0").add("case-2");
  const controller = new AbortController();
  const run = client.runSuiteSharded({ compact: ["contains:o"], cases: cases(4) }, { shards: 2 }, {
    signal: controller.signal,
  });
  await eventually(() => fake.arrived.length === 2, "both chunks in flight");
  controller.abort();
  await run.then(
    () => assert.fail("a cancelled run succeeded"),
    (e: unknown) => expectCode(e, Status.CANCELLED),
  );
  await eventually(() => fake.cancelled.length === 2, "both chunks cancelled");
  assert.deepEqual(Object.fromEntries(fake.calls), { "case-0": 1, "case-2": 1 });
});

test("timeoutMs is the whole run's deadline, not each chunk's", TIMEOUT, async () => {
  // Two chunks one after the other, 250 ms each: the second has what the first left of 400 ms.
  fake.delayMs = 250;
  const err = await client
    .runSuiteSharded({ compact: ["contains:o"], cases: cases(2) }, { shards: 1, chunkCases: 1 }, { timeoutMs: 400 })
    .then(
      () => assert.fail("a run past its deadline succeeded"),
      (e: unknown) => e,
    );
  expectCode(err, Status.DEADLINE_EXCEEDED);
  assert.deepEqual(fake.arrived, ["case-0", "case-1"]);
});

test("budgetUsd is divided among the chunks in proportion to their cases", TIMEOUT, async () => {
  await client.runSuiteSharded({ compact: ["contains:o"], budgetUsd: 1, cases: cases(10) }, { shards: 3, chunkCases: 3 });
  const shares = new Map(fake.requests.map((r) => [r.cases[0]!.sample!.id, [r.cases.length, r.budgetUsd]]));
  assert.deepEqual(Object.fromEntries(shares), {
    "case-0": [3, 0.3],
    "case-3": [3, 0.3],
    "case-6": [3, 0.3],
    "case-9": [1, 0.1],
  });
  fake.requests.length = 0;
  await client.runSuiteSharded({ compact: ["contains:o"], cases: cases(10) }, { shards: 3 });
  assert.deepEqual(
    fake.requests.map((r) => r.cases.length).sort(),
    [2, 4, 4],
  );
  for (const r of fake.requests) assert.equal(r.budgetUsd, undefined);
});

test("a request without cases is one chunk: the request, budget and all", TIMEOUT, async () => {
  const got = await client.runSuiteSharded({ suiteYaml: "suites: {}", suiteName: "own", budgetUsd: 0.5 }, { shards: 3 });
  assert.equal(fake.requests.length, 1);
  const [sent] = fake.requests;
  assert.deepEqual([sent?.suiteYaml, sent?.suiteName, sent?.budgetUsd, sent?.cases], ["suites: {}", "own", 0.5, []]);
  assert.deepEqual(got.results, []);
  assert.equal(got.summary.cases, 0);
});
