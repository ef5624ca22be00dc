// Tests of runSuiteSharded against a real scorewire server (see live.ts); the chunk
// retries are in shards-retry.test.ts, against a fake.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import {
  type Case,
  type CaseResult,
  type DeepPartial,
  type Gate,
  type RunSuiteRequest,
  type RunSummary,
  STREAM_CHUNK_CASES,
  type ShardOptions,
  ScorewireError,
  Status,
  mergeSummaries,
} from "../src";
import { CHECKLLM_RECORDED, CHECKLLM_SUITE } from "./checkllm";
import { useLiveServer } from "./live";

const TIMEOUT = { timeout: 120_000 };

const live = useLiveServer(TIMEOUT);

/** Passing, failing, erroring (no expected value) and skipped scores, as in the Go client's tests. */
function mixedCases(n: number): DeepPartial<Case>[] {
  return Array.from({ length: n }, (_, i) => {
    const k = i % 7;
    if (k <= 2) {
      const text = k === 0 ? "Paris is the capital" : "Paris is a city in France";
      return { sample: { id: `c${i}`, expected: "Paris is the capital" }, output: { text } };
    }
    if (k <= 4) return { sample: { id: `c${i}`, expected: "Rome" }, output: { text: k === 3 ? "Roma" : "Rome" } };
    return { sample: { id: `c${i}` }, output: { text: "no expected value here" } };
  });
}

function mixedRequest(gate: DeepPartial<Gate> | undefined, n = 97): DeepPartial<RunSuiteRequest> {
  return {
    checks: [
      { type: "exact", name: "same" },
      { type: "rouge_l", name: "overlap" },
      {
        type: "contains",
        name: "roman",
        params: { needles: ["Rome"] },
        when: { type: "contains", params: { needles: ["Rom"] } },
      },
    ],
    gate,
    cases: mixedCases(n),
  };
}

function near(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b));
}

/** Every count of a summary, overall and per check. */
function counts(s: RunSummary): number[] {
  return [
    s.cases,
    s.casesPassed,
    s.passed,
    s.failed,
    s.errored,
    s.skipped,
    ...s.checks.flatMap((c) => [c.passed, c.failed, c.errored, c.skipped, c.cached]),
  ];
}

/** Asserts the merged summary `m` is the one RunSuite's `one`: counts, rates, per-check means and the gate. */
function assertSameSummary(m: RunSummary, one: RunSummary, name: string): void {
  assert.deepEqual(counts(m), counts(one), `${name}: counts`);
  for (const key of ["passRate", "meanScore", "errorRate", "valueSum", "costUsd"] as const) {
    assert.ok(near(m[key], one[key]), `${name}: ${key} ${m[key]}, want ${one[key]}`);
  }
  m.checks.forEach((c, i) => {
    const want = one.checks[i]!;
    assert.deepEqual([c.name, c.type], [want.name, want.type], name);
    assert.ok(near(c.meanValue, want.meanValue), `${name}: check ${c.name} mean ${c.meanValue}, want ${want.meanValue}`);
    assert.ok(near(c.valueSum, want.valueSum), `${name}: check ${c.name} value sum`);
  });
  assert.equal(m.gatePassed, one.gatePassed, `${name}: gate passed`);
  assert.deepEqual(m.gateReasons, one.gateReasons, `${name}: gate reasons`);
  assert.deepEqual(m.gate, one.gate, `${name}: gate`);
}

/** Asserts `results` hold each of `n` cases once, with its index in the request (sample ids `${prefix}${index}`). */
function assertEachCaseOnce(results: CaseResult[], n: number, name: string, prefix = "c"): void {
  assert.equal(results.length, n, `${name}: results`);
  assert.deepEqual(
    results.map((r) => r.index).sort((a, b) => a - b),
    Array.from({ length: n }, (_, i) => i),
    `${name}: indexes`,
  );
  for (const r of results) assert.equal(r.sampleId, `${prefix}${r.index}`, `${name}: result ${r.index}`);
}

test("the merged summary is one RunSuite's, and every case is reported once with its index", TIMEOUT, async () => {
  const gates: DeepPartial<Gate>[] = [
    { maxErrorRate: 0.5 }, // passes
    { maxErrorRate: 0.5, minPassRate: 0.3 }, // fails on the merged pass rate, whatever the chunks' are
    { maxErrorRate: 1, minMeanScore: 0.4, maxCostUsd: 1 }, // fails: mean score 0.3658
    { minPassRate: 0.987654321 }, // fails, and the server prints 0.987654 (Python's g); the error rate too
  ];
  const shardings: ShardOptions[] = [{ shards: 1 }, { shards: 3, chunkCases: 10 }, { shards: 4, chunkCases: 1 }];
  for (const [gi, gate] of gates.entries()) {
    const { results: whole, summary: one } = await live.client.runSuite(mixedRequest(gate)).collect();
    assert.equal(one.gatePassed, gi === 0, `gate ${gi}: ${one.gateReasons.join("; ")}`);
    const byIndex = new Map(whole.map((r) => [r.index, r]));
    for (const opts of shardings) {
      const name = `gate ${gi} shards ${opts.shards} chunk ${opts.chunkCases}`;
      const chunks: number[][] = [];
      const got = await live.client.runSuiteSharded(mixedRequest(gate), {
        ...opts,
        onChunk: (results) => chunks.push(results.map((r) => r.index)),
      });
      assertSameSummary(got.summary, one, name);
      assertEachCaseOnce(got.results, 97, name);
      for (const r of got.results) assert.equal(r.passed, byIndex.get(r.index)?.passed, `${name}: result ${r.index}`);
      // onChunk saw the same results, chunk by chunk, each chunk consecutive cases.
      assert.deepEqual(chunks.flat(), got.results.map((r) => r.index), name);
      const size = opts.chunkCases ?? 97;
      assert.equal(chunks.length, Math.ceil(97 / size), name);
      for (const c of chunks) {
        const sorted = [...c].sort((a, b) => a - b);
        assert.equal(sorted.at(-1)! - sorted[0]! + 1, c.length, `${name}: chunk ${sorted[0]} not consecutive`);
      }
      assert.equal(got.retries, 0, name);
    }
  }
});

test("the gate reasons are the server's, number for number", TIMEOUT, async () => {
  // 9 of 32 cases pass: a pass rate of exactly 0.28125, which the server rounds to even.
  const request = {
    compact: ["contains:yes"],
    gate: { minPassRate: 0.987654321 },
    cases: Array.from({ length: 32 }, (_, i) => ({ sample: { id: `c${i}` }, output: { text: i < 9 ? "yes" : "no" } })),
  };
  const { summary: one } = await live.client.runSuite(request).collect();
  assert.deepEqual(one.gateReasons, ["pass rate 0.2812 is below min_pass_rate 0.987654"]);
  const got = await live.client.runSuiteSharded(request, { shards: 3, chunkCases: 5 });
  assertSameSummary(got.summary, one, "32 cases in chunks of 5");
});

test("chunks over STREAM_CHUNK_CASES go as RunSuiteStream and are indexed the same", TIMEOUT, async () => {
  const n = 2 * STREAM_CHUNK_CASES + 203;
  const { summary: one } = await live.client.runSuite(mixedRequest({ maxErrorRate: 0.5 }, n)).collect();
  const got = await live.client.runSuiteSharded(mixedRequest({ maxErrorRate: 0.5 }, n), { shards: 2 });
  assertSameSummary(got.summary, one, `${n} cases in 2 chunks`);
  assertEachCaseOnce(got.results, n, `${n} cases in 2 chunks`);
});

test("a suite document with its own cases runs as one chunk", TIMEOUT, async () => {
  const suiteYaml = [
    "checks:",
    "  paris: {type: contains, needles: [Paris]}",
    "datasets:",
    "  qa:",
    "    cases:",
    ...Array.from({ length: 7 }, (_, i) => `      - {id: own-${i}, output: ${i % 3 === 0 ? "Paris" : "Rome"}}`),
    "suites:",
    "  smoke: {dataset: qa, target: recorded, checks: [paris], gate: {min_pass_rate: 0.5}}",
  ].join("\n");
  const { summary: one } = await live.client.runSuite({ suiteYaml, suiteName: "smoke" }).collect();
  assert.equal(one.cases, 7);
  const chunks: CaseResult[][] = [];
  const got = await live.client.runSuiteSharded(
    { suiteYaml, suiteName: "smoke" },
    { shards: 3, onChunk: (results) => chunks.push(results) },
  );
  assert.equal(chunks.length, 1);
  assertSameSummary(got.summary, one, "suite cases");
  assertEachCaseOnce(got.results, 7, "suite cases", "own-");
  assert.deepEqual(got.summary.gateReasons, ["pass rate 0.4286 is below min_pass_rate 0.5"]);
});

test("an invalid request fails the run with INVALID_ARGUMENT", TIMEOUT, async () => {
  const chunks: CaseResult[][] = [];
  const err = await live.client
    .runSuiteSharded(
      { checks: [{ type: "output_length", params: { maximun: 5 } }], cases: mixedCases(20) },
      { shards: 3, onChunk: (results) => chunks.push(results) },
    )
    .then(
      () => assert.fail("an invalid sharded run succeeded"),
      (e: unknown) => e,
    );
  assert.ok(err instanceof ScorewireError, String(err));
  assert.equal(err.code, Status.INVALID_ARGUMENT, err.message);
  assert.match(err.fieldViolations[0]?.field ?? "", /^checks\[0\]/);
  assert.deepEqual(chunks, []);
});

test("shards must be a positive integer", TIMEOUT, async () => {
  for (const shards of [0, -1, 1.5]) {
    await assert.rejects(live.client.runSuiteSharded(mixedRequest(undefined), { shards }), RangeError);
  }
});

test("summaries of different checks do not merge", TIMEOUT, async () => {
  const a = await live.client.runSuite({ compact: ["contains:x"], cases: mixedCases(3) }).summary();
  const b = await live.client.runSuite({ compact: ["contains:y"], cases: mixedCases(3) }).summary();
  assert.throws(() => mergeSummaries([a, b]), /different checks/);
  assert.throws(() => mergeSummaries([]), /no summaries/);
});

test("a recorded batch in one chunk reports the run the server recorded", TIMEOUT, async () => {
  const request = (): DeepPartial<RunSuiteRequest> => ({
    compact: ["contains:Paris", "length:1..100"],
    cases: mixedCases(5),
    record: true,
    runName: `ts-sharded-${randomUUID()}`,
  });
  const plain = await live.client.runSuite(request()).summary();
  assert.notEqual(plain.runId, "", "the plain run was not recorded");
  const got = await live.client.runSuiteSharded(request(), { shards: 1 });
  assert.notEqual(got.summary.runId, "", "the sharded run lost the recorded run's id");
  assert.notEqual(got.summary.runId, plain.runId, "two runs, two ids");
  const run = await live.client.getRun(got.summary.runId);
  assert.equal(run.results, 5);
  // The same summary as the plain recorded run's, but for the id.
  assert.deepEqual({ ...got.summary, runId: "" }, { ...plain, runId: "" });
  for (const id of [plain.runId, got.summary.runId]) await live.client.deleteRun(id);
});

/**
 * 9 cases whose contains:Paris passes in the first three, fails in the next three and
 * passes once in the last three, so each chunk of 3 has its own counts (3, 0 and 1 passed).
 */
function chunkedCases(): DeepPartial<Case>[] {
  const texts = ["Paris", "in Paris", "Paris, France", "Rome", "Berlin", "Madrid", "Lyon", "Paris again", "Nice"];
  return texts.map((text, i) => ({ sample: { id: `s${i}` }, output: { text } }));
}

test("a recorded batch sharded 3 ways names its 3 runs in case order", TIMEOUT, async () => {
  const got = await live.client.runSuiteSharded(
    { compact: ["contains:Paris"], cases: chunkedCases(), record: true, runName: `ts-sharded-${randomUUID()}` },
    { shards: 3, chunkCases: 3 },
  );
  try {
    assert.equal(got.summary.runId, "", "the merged summary names no run");
    assert.equal(got.runIds.length, 3, `runIds ${JSON.stringify(got.runIds)}`);
    assert.equal(new Set(got.runIds).size, 3, `runIds ${JSON.stringify(got.runIds)} are not distinct`);
    assert.ok(!got.runIds.includes(""), "an empty run id");
    for (const [i, id] of got.runIds.entries()) {
      // Chunk i holds cases 3i..3i+2: 3, 0 and 1 of them pass.
      const run = await live.client.getRun(id);
      assert.equal(run.results, 3, `run ${i}: results`);
      assert.equal(run.summary?.cases, 3, `run ${i}: cases`);
      assert.equal(run.summary?.casesPassed, [3, 0, 1][i], `run ${i}: cases passed`);
      const page = await live.client.listRunResults({ runId: id });
      assert.deepEqual(
        page.results.map((r) => r.case?.sample?.id).sort(),
        [`s${3 * i}`, `s${3 * i + 1}`, `s${3 * i + 2}`],
        `run ${i} holds its chunk's cases`,
      );
    }
  } finally {
    for (const id of got.runIds) await live.client.deleteRun(id);
  }
});

test("runIds is empty without record, and one chunk's is its summary's runId", TIMEOUT, async () => {
  const request = { compact: ["contains:Paris"], cases: chunkedCases() };
  const plain = await live.client.runSuiteSharded(request, { shards: 3, chunkCases: 3 });
  assert.deepEqual(plain.runIds, []);
  const one = await live.client.runSuiteSharded({ ...request, record: true }, { shards: 1 });
  try {
    assert.notEqual(one.summary.runId, "", "the run was not recorded");
    assert.deepEqual(one.runIds, [one.summary.runId]);
  } finally {
    if (one.summary.runId !== "") await live.client.deleteRun(one.summary.runId);
  }
});

test("a checkllm batch in one chunk keeps the server's matrix and gate", TIMEOUT, async () => {
  const suiteYaml = CHECKLLM_SUITE;
  const cases = CHECKLLM_RECORDED;
  const plain = await live.client.runSuite({ suiteYaml, cases }).summary();
  assert.equal(plain.matrix.length, 4);
  const got = await live.client.runSuiteSharded({ suiteYaml, cases }, { shards: 1 });
  assert.deepEqual(got.summary, plain);
});

test("a complete recorded checkllm batch, sharded, runs whole as one plain runSuite", TIMEOUT, async () => {
  const suiteYaml = CHECKLLM_SUITE;
  const cases = CHECKLLM_RECORDED;
  const plain = await live.client.runSuite({ suiteYaml, cases }).summary();
  assert.equal(plain.matrix.length, 4);
  for (const shards of [2, 3]) {
    const chunks: CaseResult[][] = [];
    const got = await live.client.runSuiteSharded({ suiteYaml, cases }, { shards, onChunk: (r) => chunks.push(r) });
    assert.deepEqual(got.summary, plain, `shards ${shards}: the plain run's summary`);
    assert.equal(chunks.length, 1, `shards ${shards}: one chunk`);
    assert.deepEqual(
      got.results.map((r) => r.index).sort((a, b) => a - b),
      Array.from({ length: cases.length }, (_, i) => i),
      `shards ${shards}: each case once`,
    );
  }
});
