// Tests of the channel's own retries (the service config from channelOptionsFor) against
// an in-process fake ScoringService that refuses the first call of each method.
import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, test } from "node:test";

import * as grpc from "@grpc/grpc-js";

import {
  ListChecksResponse,
  type RunSuiteRequest,
  RunSuiteResponse,
  type RunSuiteStreamRequest,
  type RunSuiteStreamResponse,
  STREAM_CHUNK_CASES,
  ScoreResponse,
  type ScoreStreamRequest,
  ScoreStreamResponse,
  ScorewireClient,
  ScorewireError,
  type ScoringServiceServer,
  Status,
  ValidateSuiteResponse,
} from "../src";
import { type FakeServer, startFake } from "./fake";

const TIMEOUT = { timeout: 30_000 };

/**
 * A fake ScoringService: the first call of each method fails with `firstCode` (before
 * any response, as a trailers-only status), every later one is answered. It counts the
 * calls of each method and keeps what each RunSuiteStream call received.
 */
class FakeScoring {
  firstCode: Status = Status.UNAVAILABLE;
  readonly calls = new Map<string, number>();
  /** The requests each RunSuiteStream call received, call by call. */
  readonly streamRequests: RunSuiteStreamRequest[][] = [];

  /** Counts a call of `method`; true when it is the first, which fails. */
  private refuses(method: string): boolean {
    const n = (this.calls.get(method) ?? 0) + 1;
    this.calls.set(method, n);
    return n === 1;
  }

  private get refusal(): Partial<grpc.StatusObject> {
    return { code: this.firstCode, details: "refused by the fake" };
  }

  readonly implementation: ScoringServiceServer = {
    score: (_call, callback) => {
      if (this.refuses("Score")) callback(this.refusal, null);
      else callback(null, ScoreResponse.fromPartial({ scores: [{ name: "fake", passed: true, value: 1 }], passed: true }));
    },
    runSuite: (call) => {
      if (this.refuses("RunSuite")) call.emit("error", this.refusal);
      else answerRun(call, call.request.cases.length);
    },
    runSuiteStream: (call) => {
      const refused = this.refuses("RunSuiteStream");
      const received: RunSuiteStreamRequest[] = [];
      this.streamRequests.push(received);
      call.on("data", (request: RunSuiteStreamRequest) => received.push(request));
      // Read every request first, as the server does, so the refusal comes once the
      // client has sent the whole batch and a retry must send it all again.
      call.on("end", () => {
        if (refused) {
          call.emit("error", this.refusal);
          return;
        }
        let count = 0;
        for (const r of received) if (r.message?.$case === "cases") count += r.message.cases.cases.length;
        answerRun(call, count);
      });
    },
    scoreStream: (call: grpc.ServerDuplexStream<ScoreStreamRequest, ScoreStreamResponse>) => {
      if (this.refuses("ScoreStream")) {
        call.emit("error", this.refusal);
        return;
      }
      call.on("data", (request: ScoreStreamRequest) => {
        if (request.message?.$case === "case") {
          call.write(ScoreStreamResponse.fromPartial({ requestId: request.message.case.requestId, passed: true }));
        }
      });
      call.on("end", () => call.end());
    },
    listChecks: (_call, callback) => {
      if (this.refuses("ListChecks")) callback(this.refusal, null);
      else callback(null, ListChecksResponse.fromPartial({}));
    },
    validateSuite: (_call, callback) => {
      if (this.refuses("ValidateSuite")) callback(this.refusal, null);
      else callback(null, ValidateSuiteResponse.fromPartial({ valid: true, runnable: true }));
    },
  };
}

/** Answers a run of `n` cases: one batch with every result, then the summary. */
function answerRun(
  call: grpc.ServerWritableStream<RunSuiteRequest, unknown> | grpc.ServerDuplexStream<unknown, RunSuiteStreamResponse>,
  n: number,
): void {
  const results = Array.from({ length: n }, (_, index) => ({ index, sampleId: `case-${index}`, passed: true }));
  call.write(RunSuiteResponse.fromPartial({ event: { $case: "results", results: { results } } }));
  call.write(RunSuiteResponse.fromPartial({ event: { $case: "summary", summary: { cases: n, passed: n, passRate: 1 } } }));
  call.end();
}

/** `n` small cases (a few bytes each, so 501 of them fit any retry buffer). */
function cases(n: number): { sample: { id: string }; output: { text: string } }[] {
  return Array.from({ length: n }, (_, i) => ({ sample: { id: `case-${i}` }, output: { text: `o${i}` } }));
}

let server: FakeServer;
let fake: FakeScoring;
let client: ScorewireClient;

before(async () => {
  server = await startFake({
    // Each test gets a fresh fake; the server calls the current one.
    score: (call, cb) => fake.implementation.score(call, cb),
    runSuite: (call) => fake.implementation.runSuite(call),
    runSuiteStream: (call) => fake.implementation.runSuiteStream(call),
    scoreStream: (call) => fake.implementation.scoreStream(call),
    listChecks: (call, cb) => fake.implementation.listChecks(call, cb),
    validateSuite: (call, cb) => fake.implementation.validateSuite(call, cb),
  } satisfies ScoringServiceServer);
});

after(() => server.stop());

beforeEach(() => {
  fake = new FakeScoring();
  client = new ScorewireClient(server.address, { timeoutMs: 10_000, streamTimeoutMs: 10_000 });
});

afterEach(() => client.close());

/** Asserts `err` is a ScorewireError with `code`. */
function expectCode(err: unknown, code: Status): void {
  assert.ok(err instanceof ScorewireError, `not a ScorewireError: ${String(err)}`);
  assert.equal(err.code, code, `${err.codeName}: ${err.details}`);
}

test("score is retried on UNAVAILABLE and resolves with the second answer", TIMEOUT, async () => {
  const response = await client.score({ output: { text: "x" }, compact: ["contains:x"] });
  assert.equal(response.passed, true);
  assert.deepEqual(
    response.scores.map((s) => s.name),
    ["fake"],
  );
  assert.equal(fake.calls.get("Score"), 2);
});

test("listChecks and validateSuite are retried on UNAVAILABLE", TIMEOUT, async () => {
  assert.deepEqual((await client.listChecks()).checks, []);
  await client.validateSuite({ compact: ["contains:x"] });
  assert.equal(fake.calls.get("ListChecks"), 2);
  assert.equal(fake.calls.get("ValidateSuite"), 2);
});

test("runSuite (RunSuite) refused before any response is retried", TIMEOUT, async () => {
  const { results, summary } = await client.runSuite({ compact: ["contains:o"], cases: cases(3) }).collect();
  assert.deepEqual(
    results.map((r) => r.index),
    [0, 1, 2],
  );
  assert.equal(summary.cases, 3);
  assert.equal(fake.calls.get("RunSuite"), 2);
  assert.equal(fake.calls.get("RunSuiteStream"), undefined);
});

test("runSuite (RunSuiteStream) refused before any response is retried with every chunk", TIMEOUT, async () => {
  const n = STREAM_CHUNK_CASES + 1;
  const { results, summary } = await client.runSuite({ compact: ["contains:o"], cases: cases(n) }).collect();
  assert.equal(results.length, n);
  assert.equal(summary.cases, n);
  assert.equal(fake.calls.get("RunSuiteStream"), 2);
  assert.equal(fake.calls.get("RunSuite"), undefined);
  // Both attempts got the config and then both chunks: the retry resent them all.
  for (const received of fake.streamRequests) {
    assert.deepEqual(
      received.map((r) => r.message?.$case),
      ["config", "cases", "cases"],
    );
    const [config, ...chunks] = received;
    assert.ok(config?.message?.$case === "config");
    assert.equal(config.message.config.caseCount, n);
    assert.deepEqual(config.message.config.request?.compact, ["contains:o"]);
    const ids = chunks.flatMap((c) => (c.message?.$case === "cases" ? c.message.cases.cases : []));
    assert.deepEqual(
      ids.map((c) => c.sample?.id),
      cases(n).map((c) => c.sample.id),
    );
  }
});

test("runSuite (RunSuiteStream) that has sent more than its retry buffer is not retried", TIMEOUT, async () => {
  // 501 cases are a few KiB, over a 1 KiB buffer: grpc-js commits to the first attempt.
  const small = new ScorewireClient(server.address, {
    streamTimeoutMs: 10_000,
    channelOptions: { "grpc.per_rpc_retry_buffer_size": 1024 },
  });
  try {
    await small
      .runSuite({ compact: ["contains:o"], cases: cases(STREAM_CHUNK_CASES + 1) })
      .collect()
      .then(
        () => assert.fail("expected UNAVAILABLE"),
        (err: unknown) => expectCode(err, Status.UNAVAILABLE),
      );
  } finally {
    small.close();
  }
  assert.equal(fake.calls.get("RunSuiteStream"), 1);
});

test("scoreStream is never retried: UNAVAILABLE reaches the caller", TIMEOUT, async () => {
  const stream = client.scoreStream({ compact: ["contains:x"] });
  const err = await (async () => {
    try {
      for await (const _ of stream) assert.fail("no response expected");
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  expectCode(err, Status.UNAVAILABLE);
  assert.equal(fake.calls.get("ScoreStream"), 1);
});

test("a code other than UNAVAILABLE is not retried", TIMEOUT, async () => {
  fake.firstCode = Status.INVALID_ARGUMENT;
  await client.score({ output: { text: "x" } }).then(
    () => assert.fail("expected INVALID_ARGUMENT"),
    (err: unknown) => expectCode(err, Status.INVALID_ARGUMENT),
  );
  assert.equal(fake.calls.get("Score"), 1);
  await client
    .runSuite({ compact: ["contains:o"], cases: cases(STREAM_CHUNK_CASES + 1) })
    .collect()
    .then(
      () => assert.fail("expected INVALID_ARGUMENT"),
      (err: unknown) => expectCode(err, Status.INVALID_ARGUMENT),
    );
  assert.equal(fake.calls.get("RunSuiteStream"), 1);
});
