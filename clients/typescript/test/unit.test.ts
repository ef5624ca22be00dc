// Tests of the wrapper's pure parts; they need no server.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Gate,
  Metadata,
  RunSuiteRequest,
  RunSummary,
  ScorewireError,
  Status,
  SuiteFormat,
  channelOptionsFor,
  gateReasons,
  isRetryable,
  mergeSummaries,
  normalizeTarget,
  outputHash,
  toScorewireError,
} from "../src";
import { splitChunks } from "../src/shards";
import { formatFixed, formatG } from "../src/summary";
import { BadRequest } from "../src/gen/google/rpc/error_details";
import { Status as RpcStatus } from "../src/gen/google/rpc/status";
import { CHECKLLM_RECORDED, CHECKLLM_SUITE } from "./checkllm";

/** Trailers as a server sends them for INVALID_ARGUMENT with a BadRequest detail. */
function trailersWith(violations: { field: string; description: string }[]): Metadata {
  const status = RpcStatus.encode({
    code: Status.INVALID_ARGUMENT,
    message: "bad",
    details: [
      { typeUrl: "type.googleapis.com/google.rpc.RetryInfo", value: Buffer.from([]) },
      {
        typeUrl: "type.googleapis.com/google.rpc.BadRequest",
        value: Buffer.from(BadRequest.encode(BadRequest.fromPartial({ fieldViolations: violations })).finish()),
      },
    ],
  }).finish();
  const md = new Metadata();
  md.set("grpc-status-details-bin", Buffer.from(status));
  return md;
}

test("field violations are decoded from grpc-status-details-bin, other details skipped", () => {
  const serviceError = Object.assign(new Error("3 INVALID_ARGUMENT: bad"), {
    code: Status.INVALID_ARGUMENT,
    details: "bad",
    metadata: trailersWith([
      { field: "checks[2].params.pattern", description: "unbalanced parenthesis" },
      { field: "compact[0]", description: "unknown check" },
    ]),
  });
  const err = toScorewireError(serviceError);
  assert.ok(err instanceof ScorewireError && err instanceof Error);
  assert.equal(err.code, Status.INVALID_ARGUMENT);
  assert.equal(err.codeName, "INVALID_ARGUMENT");
  assert.equal(err.details, "bad");
  assert.deepEqual(err.fieldViolations, [
    { field: "checks[2].params.pattern", description: "unbalanced parenthesis" },
    { field: "compact[0]", description: "unknown check" },
  ]);
});

test("a malformed status trailer leaves the code and no violations", () => {
  const md = new Metadata();
  md.set("grpc-status-details-bin", Buffer.from([0xff, 0xff, 0xff]));
  const err = toScorewireError(Object.assign(new Error("x"), { code: Status.INTERNAL, details: "x", metadata: md }));
  assert.equal(err.code, Status.INTERNAL);
  assert.deepEqual(err.fieldViolations, []);
});

test("a non-gRPC error becomes UNKNOWN", () => {
  assert.equal(toScorewireError(new TypeError("boom")).code, Status.UNKNOWN);
});

test("host:port targets resolve through dns:, schemes are kept", () => {
  // Each row: [address, target].
  const rows: [string, string][] = [
    ["127.0.0.1:50051", "dns:///127.0.0.1:50051"],
    ["localhost:50051", "dns:///localhost:50051"],
    ["scorewire.internal:443", "dns:///scorewire.internal:443"],
    ["[::1]:50051", "dns:///[::1]:50051"],
    ["dns:///scorewire:50051", "dns:///scorewire:50051"],
    ["unix:/tmp/scorewire.sock", "unix:/tmp/scorewire.sock"],
    ["ipv4:10.0.0.1:1,10.0.0.2:1", "ipv4:10.0.0.1:1,10.0.0.2:1"],
  ];
  for (const [address, target] of rows) assert.equal(normalizeTarget(address), target, address);
});

test("channel defaults: round_robin, keepalive, 64 MiB messages; overrides win", () => {
  const opts = channelOptionsFor({});
  const config = JSON.parse(opts["grpc.service_config"] as string);
  assert.deepEqual(config.loadBalancingConfig, [{ round_robin: {} }]);
  // PutLabels (its requestId makes that safe) and the idempotent scoring calls but
  // ScoreStream are retried, on UNAVAILABLE alone, as in the Go and Python clients.
  assert.deepEqual(config.methodConfig[0].name, [{ service: "scorewire.v1.LabelService", method: "PutLabels" }]);
  assert.deepEqual(
    config.methodConfig[1].name.map((n: { service: string; method: string }) => `${n.service}/${n.method}`),
    ["Score", "RunSuite", "RunSuiteStream", "ListChecks", "ValidateSuite"].map((m) => `scorewire.v1.ScoringService/${m}`),
  );
  assert.equal(config.methodConfig.length, 2);
  for (const { retryPolicy } of config.methodConfig) {
    assert.deepEqual(retryPolicy, {
      maxAttempts: 3,
      initialBackoff: "0.2s",
      maxBackoff: "2s",
      backoffMultiplier: 2,
      retryableStatusCodes: ["UNAVAILABLE"],
    });
  }
  // The same keepalive as the Python, Go and Java clients and the server: 30 s.
  assert.equal(opts["grpc.keepalive_time_ms"], 30_000);
  assert.equal(opts["grpc.keepalive_timeout_ms"], 10_000);
  assert.equal(opts["grpc.max_receive_message_length"], 64 * 1024 * 1024);
  assert.equal(channelOptionsFor({ channelOptions: { "grpc.keepalive_time_ms": 5 } })["grpc.keepalive_time_ms"], 5);
});

test("outputHash is the SHA-256 of the exact UTF-8 bytes", () => {
  assert.equal(outputHash("Paris"), "5dd272b4f316b776a7b8e3d0894b37e1e42be3d5d3b204b8a5836cc50597a6b1");
  assert.equal(outputHash("é"), "4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
  assert.notEqual(outputHash("Paris\n"), outputHash("Paris"));
});

test("isRetryable sends only lost replicas elsewhere", () => {
  // Each row: [code, message, retryable]; the Go client's table, and what grpc-js says.
  const rows: [Status, string, boolean][] = [
    [Status.UNAVAILABLE, "connection refused", true],
    [Status.UNAVAILABLE, "Connection dropped", true],
    [Status.INTERNAL, "stream terminated by RST_STREAM with error code: INTERNAL_ERROR", true],
    [Status.INTERNAL, "Received RST_STREAM with code 2 (Internal server error)", true],
    [Status.INTERNAL, "server closed the stream without sending trailers", true],
    [Status.INTERNAL, "the stream ended without a summary", true],
    [Status.UNKNOWN, "Stream removed", true],
    [Status.INTERNAL, "internal error", false],
    [Status.UNKNOWN, "boom", false],
    [Status.INVALID_ARGUMENT, "checks[0]", false],
    [Status.DEADLINE_EXCEEDED, "Deadline exceeded", false],
    [Status.CANCELLED, "Received RST_STREAM with code 8", false],
  ];
  for (const [code, message, want] of rows) {
    assert.equal(isRetryable(new ScorewireError(code, message)), want, `${Status[code]} ${message}`);
  }
  assert.equal(isRetryable(new Error("Received RST_STREAM")), false);
});

test("numbers in gate reasons are formatted as Python formats them", () => {
  // Each row: [x, Python's f"{x:.4g}", f"{x:g}", f"{x:.4f}"]; toPrecision and toFixed round ties up.
  const rows: [number, string, string, string][] = [
    [0.28125, "0.2812", "0.28125", "0.2812"],
    [0.123456789, "0.1235", "0.123457", "0.1235"],
    [0.03125, "0.03125", "0.03125", "0.0312"],
    [0.00125, "0.00125", "0.00125", "0.0013"],
    [9.99995, "10", "9.99995", "10.0000"],
    [1234567, "1.235e+06", "1.23457e+06", "1234567.0000"],
    [1e-5, "1e-05", "1e-05", "0.0000"],
    [0.5, "0.5", "0.5", "0.5000"],
    [1, "1", "1", "1.0000"],
    [0, "0", "0", "0.0000"],
  ];
  for (const [x, g4, g, f4] of rows) {
    assert.deepEqual([formatG(x, 4), formatG(x), formatFixed(x, 4)], [g4, g, f4], String(x));
  }
});

test("gateReasons: no cases meet no min threshold; max_error_rate is 0 unless set", () => {
  const empty = RunSummary.fromPartial({});
  assert.deepEqual(gateReasons({ minPassRate: 0, minMeanScore: 0 }, empty), [
    "pass rate 0 is below min_pass_rate 0",
    "mean score 0 is below min_mean_score 0",
  ]);
  assert.deepEqual(gateReasons(undefined, empty), []);
  const spent = RunSummary.fromPartial({ cases: 4, passRate: 1, meanScore: 1, errorRate: 0.25, costUsd: 0.03125 });
  assert.deepEqual(gateReasons({ maxCostUsd: 0.03 }, spent), [
    "error rate 0.25 is above max_error_rate 0",
    "cost $0.0312 is above max_cost $0.03",
  ]);
  assert.deepEqual(gateReasons({ maxErrorRate: 0.25, minPassRate: 1 }, spent), []);
});

test("mergeSummaries adds counts, sums and costs and recomputes every rate from them", () => {
  // Shards of 1 and 3 cases: a mean of their means would weigh the single case as much as the three.
  const gate = { maxErrorRate: 0.1, minPassRate: 0.5 };
  const check = (name: string) => ({ name, type: "contains" });
  const a = RunSummary.fromPartial({
    cases: 1, casesPassed: 1, passed: 2, valueSum: 2, costUsd: 0.25, passRate: 1, meanScore: 1, gate, gatePassed: true,
    checks: [{ ...check("x"), passed: 1, valueSum: 1, cached: 1, costUsd: 0.25 }, { ...check("y"), passed: 1, valueSum: 1 }],
  });
  const b = RunSummary.fromPartial({
    cases: 3, casesPassed: 0, passed: 1, failed: 3, errored: 1, skipped: 1, valueSum: 1.5, costUsd: 0.5, unpriced: true,
    gate, gateReasons: ["per shard"],
    checks: [
      { ...check("x"), passed: 1, failed: 1, errored: 1, valueSum: 1.5, cached: 2, costUsd: 0.5 },
      { ...check("y"), failed: 2, skipped: 1 },
    ],
  });
  const m = mergeSummaries([a, b]);
  assert.deepEqual(
    [m.cases, m.casesPassed, m.passed, m.failed, m.errored, m.skipped, m.valueSum, m.costUsd, m.unpriced],
    [4, 1, 3, 3, 1, 1, 3.5, 0.75, true],
  );
  assert.deepEqual([m.passRate, m.meanScore, m.errorRate], [0.25, 3.5 / 7, 1 / 7]);
  assert.deepEqual(
    m.checks.map((c) => [
      ...[c.name, c.type],
      ...[c.passed, c.failed, c.errored, c.skipped, c.cached, c.valueSum, c.costUsd, c.meanValue],
    ]),
    [
      ["x", "contains", 2, 1, 1, 0, 3, 2.5, 0.75, 2.5 / 4],
      ["y", "contains", 1, 2, 0, 1, 0, 1, 0, 1 / 3],
    ],
  );
  assert.deepEqual(m.gate, Gate.fromPartial(gate));
  assert.equal(m.gatePassed, false);
  assert.deepEqual(m.gateReasons, [
    "pass rate 0.25 is below min_pass_rate 0.5",
    "error rate 0.1429 is above max_error_rate 0.1",
  ]);
  assert.notEqual(m.gate, a.gate, "the merged gate is a copy");
});

/** A cell of a checkllm matrix, its pass rate from its counts. */
function cell(
  prompt: number,
  provider: string,
  cases: number,
  casesPassed: number,
  casesErrored: number,
  generationCostUsd: number,
) {
  const passRate = cases === 0 ? 0 : casesPassed / cases;
  return { prompt, provider, cases, casesPassed, casesErrored, passRate, generationCostUsd };
}

/** A summary as the server sends one for a checkllm run: one check, generation spending, a matrix, a run id. */
function spending(
  cases: number,
  casesPassed: number,
  generation: { costUsd: number; calls: number; cached: number; unpriced: boolean },
  runId: string,
  matrix: ReturnType<typeof cell>[],
): RunSummary {
  const rate = cases === 0 ? 0 : casesPassed / cases;
  return RunSummary.fromPartial({
    cases, casesPassed, passed: casesPassed, failed: cases - casesPassed, passRate: rate, meanScore: rate,
    valueSum: casesPassed, gate: { maxErrorRate: 0 }, gatePassed: true,
    checks: [
      {
        ...{ name: "contains", type: "contains", passed: casesPassed, failed: cases - casesPassed },
        ...{ valueSum: casesPassed, meanValue: rate },
      },
    ],
    generationCostUsd: generation.costUsd, generationCalls: generation.calls, generationCached: generation.cached,
    generationUnpriced: generation.unpriced, runId, matrix,
  });
}

test("mergeSummaries of one part is that part, a copy, its gate not judged again", () => {
  const part = spending(4, 3, { costUsd: 0.375, calls: 6, cached: 2, unpriced: true }, "run-1", [
    cell(0, "openai:gpt-4o-mini", 2, 2, 0, 0.25),
    cell(1, "openai:gpt-4o-mini", 2, 1, 1, 0.125),
  ]);
  // The server's checkllm default gate failed it; the client's rule would pass maxErrorRate 0.
  part.gatePassed = false;
  part.gateReasons = ["1 test failed (checkllm's default gate: every test passes)"];
  const want = RunSummary.fromPartial(part);
  const m = mergeSummaries([part]);
  assert.deepEqual(m, want);
  assert.notEqual(m, part, "the merged summary is a copy");
  assert.notEqual(m.matrix[0], part.matrix[0], "its matrix is a copy");
});

test("mergeSummaries adds the generation spending and the matrix cells by prompt and provider", () => {
  const a = spending(3, 2, { costUsd: 0.25, calls: 3, cached: 1, unpriced: false }, "run-a", [
    cell(0, "p1", 2, 1, 0, 0.125),
    cell(1, "p1", 1, 1, 0, 0.125),
  ]);
  const b = spending(5, 2, { costUsd: 0.5, calls: 2, cached: 2, unpriced: true }, "run-b", [
    cell(1, "p2", 1, 0, 1, 0.25),
    cell(0, "p1", 3, 1, 1, 0.25),
    cell(2, "p3", 0, 0, 0, 0),
    cell(0, "p2", 1, 1, 0, 0),
  ]);
  const c = spending(0, 0, { costUsd: 0, calls: 0, cached: 0, unpriced: false }, "run-c", []);
  const m = mergeSummaries([a, b, c]);
  assert.deepEqual(
    [m.generationCostUsd, m.generationCalls, m.generationCached, m.generationUnpriced],
    [0.75, 5, 3, true],
  );
  assert.deepEqual(m.matrix, [
    cell(0, "p1", 5, 2, 1, 0.375), // pass rate 0.4, in the place of its first appearance
    cell(1, "p1", 1, 1, 0, 0.125),
    cell(1, "p2", 1, 0, 1, 0.25),
    cell(2, "p3", 0, 0, 0, 0), // no cases: pass rate 0
    cell(0, "p2", 1, 1, 0, 0),
  ]);
  assert.equal(m.matrix[0]!.passRate, 0.4);
  assert.equal(m.runId, "", "each chunk is a run of its own: the merged summary is none of them");
  assert.deepEqual([m.cases, m.casesPassed, m.passRate, m.gatePassed], [8, 4, 0.5, true]);
  assert.deepEqual([a.matrix[0]!.cases, a.generationCostUsd], [2, 0.25], "merging changed a part");
});

test("a checkllm batch is one chunk, its whole budget included; plain cases still split", () => {
  const plainCases = Array.from({ length: 10 }, (_, i) => ({ sample: { id: `c${i}` }, output: { text: "Paris" } }));
  const onePrompt = plainCases.map((c, i) => (i === 6 ? { ...c, prompt: "1" } : c));
  const batches = {
    "format CHECKLLM": {
      suiteYaml: CHECKLLM_SUITE,
      format: SuiteFormat.SUITE_FORMAT_CHECKLLM,
      cases: plainCases,
      budgetUsd: 0.5,
    },
    "one case names a prompt": { suiteYaml: CHECKLLM_SUITE, cases: onePrompt },
    "recorded checkllm outputs": { suiteYaml: CHECKLLM_SUITE, cases: CHECKLLM_RECORDED },
  };
  for (const [name, partial] of Object.entries(batches)) {
    const request = RunSuiteRequest.fromPartial(partial);
    for (const shard of [{ shards: 3 }, { shards: 2, chunkCases: 1 }]) {
      const chunks = splitChunks(request, shard);
      assert.deepEqual(chunks.map((c) => c.offset), [0], `${name} ${JSON.stringify(shard)}: one chunk`);
      assert.deepEqual(chunks[0]!.request, request, `${name}: the request whole`);
    }
  }
  const plain = RunSuiteRequest.fromPartial({ compact: ["contains:Paris"], cases: plainCases, budgetUsd: 0.5 });
  const chunks = splitChunks(plain, { shards: 3 });
  assert.deepEqual(
    chunks.map((c) => c.offset),
    [0, 4, 8],
    "plain cases: 3 chunks",
  );
  const last = chunks[2]!.request.budgetUsd;
  assert.ok(last !== undefined && Math.abs(last - 0.1) < 1e-12, `plain cases: the last chunk's budget is ${last}`);
});
