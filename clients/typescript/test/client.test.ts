// Tests of the TypeScript client against a real scorewire server (see live.ts).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";

import * as grpc from "@grpc/grpc-js";

import {
  type CaseResult,
  Outcome,
  RunStatus,
  RunSuiteRequest,
  type RunSuiteStreamRequest,
  STREAM_CHUNK_CASES,
  ScorewireClient,
  ScorewireError,
  Status,
  SuiteRun,
  mergeSummaries,
  outputHash,
} from "../src";
import { CHECKLLM_PROVIDERS, CHECKLLM_RECORDED, CHECKLLM_SUITE } from "./checkllm";
import { useLiveServer } from "./live";

const TIMEOUT = { timeout: 120_000 };

const live = useLiveServer(TIMEOUT);

/** `n` cases whose outputs mention Northstar exactly when the index is even. */
function cases(n: number): { sample: { id: string }; output: { text: string } }[] {
  return Array.from({ length: n }, (_, i) => ({
    sample: { id: `case-${i}` },
    output: { text: i % 2 === 0 ? `Answer ${i}: Northstar ships it.` : `Answer ${i}: nobody does.` },
  }));
}

/** Asserts `err` is a ScorewireError with `code`, and returns it. */
function expectCode(err: unknown, code: Status): ScorewireError {
  assert.ok(err instanceof ScorewireError, `not a ScorewireError: ${String(err)}`);
  assert.equal(err.code, code, `${err.codeName}: ${err.details}`);
  return err;
}

describe("Score", () => {
  test("returns one score per check: structured first, then compact, in order", TIMEOUT, async () => {
    const response = await live.client.score({
      sample: { id: "s1", input: { question: "Who ships it?" }, expected: "Northstar" },
      output: { text: "Northstar ships it." },
      checks: [{ type: "output_length", params: { maximum: 200 } }],
      compact: ["contains:Northstar", "contains:Southstar"],
    });
    assert.deepEqual(
      response.scores.map((s) => [s.name, s.passed]),
      [
        ["output_length", true],
        ["contains:Northstar", true],
        ["contains:Southstar", false],
      ],
    );
    for (const score of response.scores) assert.equal(score.error, undefined, score.reason);
    assert.equal(response.scores[1]!.value, 1);
    assert.equal(response.scores[2]!.value, 0);
    // One failing check fails the response.
    assert.equal(response.passed, false);
  });

  test("INVALID_ARGUMENT carries the BadRequest field violations", TIMEOUT, async () => {
    const err = await live.client
      .score({
        output: { text: "anything" },
        checks: [{ type: "output_length", params: { maximum: 10 } }, { type: "no_such_check" }],
      })
      .then(
        () => assert.fail("an unknown check type was accepted"),
        (e: unknown) => e,
      );
    const error = expectCode(err, Status.INVALID_ARGUMENT);
    // The second check's type is the offending field; the first check is fine.
    assert.ok(
      error.fieldViolations.some((v) => v.field === "checks[1].type" && v.description !== ""),
      JSON.stringify(error.fieldViolations),
    );
    assert.ok(!error.fieldViolations.some((v) => v.field.startsWith("checks[0]")));
  });

  test("a deadline that expires fails with DEADLINE_EXCEEDED", TIMEOUT, async () => {
    // 20,000 cases cannot be scored and streamed back within 50 ms.
    const run = live.client.runSuite(
      { compact: ["contains:Northstar", "length:1..500", "regex:^Answer [0-9]+"], cases: cases(20_000) },
      { timeoutMs: 50 },
    );
    const err = await run.summary().then(
      () => assert.fail("the run finished inside its deadline"),
      (e: unknown) => e,
    );
    expectCode(err, Status.DEADLINE_EXCEEDED);
  });
});

describe("RunSuite", () => {
  test("1,000 cases: every result exactly once, and the summary matches", TIMEOUT, async () => {
    const run = live.client.runSuite({ compact: ["contains:Northstar"], cases: cases(1000) });
    const seen = new Map<number, CaseResult>();
    for await (const result of run) {
      assert.ok(!seen.has(result.index), `case ${result.index} arrived twice`);
      seen.set(result.index, result);
      assert.equal(result.sampleId, `case-${result.index}`);
      assert.equal(result.scores.length, 1);
      assert.equal(result.passed, result.index % 2 === 0, `case ${result.index}`);
    }
    assert.deepEqual(
      [...seen.keys()].sort((a, b) => a - b),
      Array.from({ length: 1000 }, (_, i) => i),
    );
    const summary = await run.summary();
    assert.equal(summary.cases, 1000);
    assert.equal(summary.casesPassed, 500);
    assert.equal(summary.passed, 500);
    assert.equal(summary.failed, 500);
    assert.equal(summary.errored, 0);
    assert.equal(summary.passRate, 0.5);
    assert.equal(summary.meanScore, 0.5);
    assert.equal(summary.errorRate, 0);
    assert.equal(summary.gatePassed, true, summary.gateReasons.join("; "));
    assert.deepEqual(
      summary.checks.map((c) => [c.name, c.passed, c.failed, c.errored]),
      [["contains:Northstar", 500, 500, 0]],
    );
  });

  test("summary() alone drains the results", TIMEOUT, async () => {
    const summary = await live.client.runSuite({ compact: ["contains:Northstar"], cases: cases(10) }).summary();
    assert.equal(summary.cases, 10);
    assert.equal(summary.casesPassed, 5);
  });

  test("leaving the iteration early cancels the run", TIMEOUT, async () => {
    const run = live.client.runSuite({ compact: ["contains:Northstar"], cases: cases(1000) });
    for await (const _ of run) break;
    const err = await run.summary().then(
      () => assert.fail("an abandoned run still produced a summary"),
      (e: unknown) => e,
    );
    expectCode(err, Status.CANCELLED);
  });

  test("a bad suite fails the iteration with INVALID_ARGUMENT and the field's path", TIMEOUT, async () => {
    const run = live.client.runSuite({ checks: [{ type: "output_length", params: { max_wrds: 3 } }], cases: cases(3) });
    const err = await (async () => {
      for await (const _ of run) assert.fail("a bad suite produced a result");
    })().then(
      () => assert.fail("a bad suite ran"),
      (e: unknown) => e,
    );
    const error = expectCode(err, Status.INVALID_ARGUMENT);
    assert.ok(
      error.fieldViolations.some((v) => v.field === "checks[0].params.max_wrds"),
      JSON.stringify(error.fieldViolations),
    );
    // summary() reports the same failure.
    await assert.rejects(run.summary(), (e: unknown) => expectCode(e, Status.INVALID_ARGUMENT) !== undefined);
  });

  test("a refusal that arrives before the iteration starts still fails it", TIMEOUT, async () => {
    // One RunSuite and one RunSuiteStream: the status is in before anyone reads the run.
    for (const n of [3, 1200]) {
      const checks = [{ type: "output_length", params: { max_wrds: 3 } }];
      const run = live.client.runSuite({ checks, cases: cases(n) });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await assert.rejects(
        run.summary(),
        (e: unknown) => expectCode(e, Status.INVALID_ARGUMENT).fieldViolations.length > 0,
        `${n} cases`,
      );
    }
  });
});

describe("RunSuite of more than STREAM_CHUNK_CASES cases", () => {
  const RUN_SUITE = "/scorewire.v1.ScoringService/RunSuite";
  const RUN_SUITE_STREAM = "/scorewire.v1.ScoringService/RunSuiteStream";
  const compact = ["contains:Northstar"];
  let observed: ScorewireClient;
  /** The method of every ScoringService call `observed` made, in order. */
  const methods: string[] = [];
  /**
   * What each of those calls sent (by index in `methods`): per RunSuiteStream message
   * `config <caseCount> <request cases>` or `cases <n>`, per RunSuite `<n> cases`.
   */
  const sent: string[][] = [];

  before(() => {
    const record: grpc.Interceptor = (options, nextCall) => {
      const call = methods.push(options.method_definition.path) - 1;
      const messages: string[] = (sent[call] = []);
      return new grpc.InterceptingCall(nextCall(options), {
        sendMessage: (message, next) => {
          messages.push(describeRequest(message));
          next(message);
        },
      });
    };
    observed = new ScorewireClient(live.address, { channelOptions: { interceptors: [record] } });
  });

  after(() => observed?.close());

  /** A request message as `sent` lists it. */
  function describeRequest(request: RunSuiteRequest | RunSuiteStreamRequest): string {
    if ("cases" in request) return `${request.cases.length} cases`;
    const message = request.message;
    if (message?.$case === "config") {
      return `config ${message.config.caseCount} ${message.config.request?.cases.length}`;
    }
    return `cases ${message?.cases.cases.length}`;
  }

  /** Runs `body`, then returns the methods it called. */
  async function methodsOf(body: () => Promise<unknown>): Promise<string[]> {
    const from = methods.length;
    await body();
    return methods.slice(from);
  }

  /** The error `run` fails with, and how many results it yielded before failing. */
  async function failureOf(run: SuiteRun): Promise<{ error: unknown; received: number }> {
    let received = 0;
    try {
      for await (const _ of run) received++;
    } catch (error) {
      return { error, received };
    }
    return assert.fail(`the run succeeded with ${received} results`);
  }

  test("1,200 cases stream: every result once, the summary as one RunSuite's", TIMEOUT, async () => {
    assert.equal(STREAM_CHUNK_CASES, 500);
    const request = { compact, cases: cases(1200) };
    const seen = new Map<number, CaseResult>();
    let run!: SuiteRun;
    const called = await methodsOf(async () => {
      run = observed.runSuite(request);
      for await (const result of run) {
        assert.ok(!seen.has(result.index), `case ${result.index} arrived twice`);
        seen.set(result.index, result);
        assert.equal(result.sampleId, `case-${result.index}`);
        assert.equal(result.passed, result.index % 2 === 0, `case ${result.index}`);
      }
    });
    assert.deepEqual(called, [RUN_SUITE_STREAM]);
    assert.deepEqual(sent.at(-1), ["config 1200 0", "cases 500", "cases 500", "cases 200"]);
    assert.deepEqual(
      [...seen.keys()].sort((a, b) => a - b),
      Array.from({ length: 1200 }, (_, i) => i),
    );
    const streamed = await run.summary();
    assert.equal(streamed.cases, 1200);
    assert.equal(streamed.casesPassed, 600);

    // The same cases as one RunSuite, past the wrapper: the same summary and results.
    const oneCall = new SuiteRun(observed.stub.runSuite(RunSuiteRequest.fromPartial(request)));
    const single = await oneCall.collect();
    assert.equal(methods.at(-1), RUN_SUITE);
    assert.deepEqual(streamed, single.summary);
    const byIndex = (results: CaseResult[]) =>
      [...results]
        .sort((a, b) => a.index - b.index)
        .map((r) => [r.index, r.sampleId, r.passed, r.scores.map((s) => [s.name, s.passed, s.value])]);
    assert.deepEqual(byIndex([...seen.values()]), byIndex(single.results));
  });

  test("500 cases still go as one RunSuite", TIMEOUT, async () => {
    let summary!: Awaited<ReturnType<SuiteRun["summary"]>>;
    const called = await methodsOf(async () => {
      summary = await observed.runSuite({ compact, cases: cases(STREAM_CHUNK_CASES) }).summary();
    });
    assert.deepEqual(called, [RUN_SUITE]);
    assert.deepEqual(sent.at(-1), ["500 cases"]);
    assert.equal(summary.cases, 500);
    assert.equal(summary.casesPassed, 250);
  });

  test("a streamed run writes its chunks only as the transport takes them", TIMEOUT, async () => {
    // The duplex call runSuite opens, caught on its way out of the stub.
    const stub = observed.stub;
    const open = stub.runSuiteStream;
    let call: ReturnType<typeof stub.runSuiteStream> | undefined;
    stub.runSuiteStream = ((...args: Parameters<typeof open>) => (call = open.apply(stub, args))) as typeof open;
    let run: SuiteRun;
    try {
      run = observed.runSuite({ compact, cases: cases(20_000) });
    } finally {
      stub.runSuiteStream = open;
    }
    // 41 messages in all; no more than the stream's buffer holds are queued at once.
    assert.ok(call !== undefined, "runSuite opened no RunSuiteStream");
    assert.ok(
      call.writableLength <= call.writableHighWaterMark,
      `${call.writableLength} messages queued (high-water mark ${call.writableHighWaterMark})`,
    );
    const summary = await run.summary();
    assert.equal(summary.cases, 20_000);
    assert.equal(summary.casesPassed, 10_000);
    assert.equal(sent.at(-1)!.length, 41);
  });

  test("a bad case in a late chunk is INVALID_ARGUMENT naming its index, as from RunSuite", TIMEOUT, async () => {
    // JSON that does not parse, in the third chunk.
    const batch = cases(1200).map((c, i) =>
      i === 1100 ? { ...c, sample: { ...c.sample, expectedJson: '{"answer": ' } } : c,
    );
    const run = observed.runSuite({ compact, cases: batch });
    assert.equal(methods.at(-1), RUN_SUITE_STREAM);
    const failure = await failureOf(run);
    assert.equal(failure.received, 0, "results came before the refusal");
    const error = expectCode(failure.error, Status.INVALID_ARGUMENT);
    assert.deepEqual(
      error.fieldViolations.map((v) => v.field),
      ["cases[1100].sample.expected_json"],
    );
    // One RunSuite of the same cases fails alike.
    const single = await failureOf(
      new SuiteRun(observed.stub.runSuite(RunSuiteRequest.fromPartial({ compact, cases: batch }))),
    );
    const singleError = expectCode(single.error, Status.INVALID_ARGUMENT);
    assert.deepEqual(error.fieldViolations, singleError.fieldViolations);
    // summary() reports the same failure, and the client goes on.
    await assert.rejects(run.summary(), (e: unknown) => e === failure.error);
    const summary = await observed.runSuite({ compact, cases: cases(3) }).summary();
    assert.equal(summary.cases, 3);
  });

  test("more cases than the server's max_cases_per_request is RESOURCE_EXHAUSTED", TIMEOUT, async () => {
    // The server's default limit is 100,000 cases.
    const batch = Array.from({ length: 100_001 }, () => ({ output: { text: "x" } }));
    let failure!: { error: unknown; received: number };
    const called = await methodsOf(async () => {
      failure = await failureOf(observed.runSuite({ compact, cases: batch }));
    });
    assert.deepEqual(called, [RUN_SUITE_STREAM]);
    const error = expectCode(failure.error, Status.RESOURCE_EXHAUSTED);
    assert.ok(
      error.fieldViolations.some(
        (v) => v.field === "config.case_count" && v.description.includes("max_cases_per_request"),
      ),
      JSON.stringify(error.fieldViolations),
    );
  });

  test("leaving a streamed run early cancels it", TIMEOUT, async () => {
    const run = observed.runSuite({ compact, cases: cases(5000) });
    assert.equal(methods.at(-1), RUN_SUITE_STREAM);
    for await (const _ of run) break;
    await assert.rejects(run.summary(), (e: unknown) => expectCode(e, Status.CANCELLED) !== undefined);
  });

  test("an abort while the cases are still being sent cancels a streamed run", TIMEOUT, async () => {
    const abort = new AbortController();
    const run = observed.runSuite({ compact, cases: cases(50_000) }, { signal: abort.signal });
    assert.equal(methods.at(-1), RUN_SUITE_STREAM);
    const call = methods.length - 1;
    abort.abort();
    const { error } = await failureOf(run);
    expectCode(error, Status.CANCELLED);
    // The whole batch is the config and 100 chunks; the sending stopped at the cancel.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(sent[call]!.length < 101, `${sent[call]!.length} messages sent after the cancel`);
    // The channel is fine.
    assert.equal((await observed.runSuite({ compact, cases: cases(2) }).summary()).cases, 2);
  });

  test("a streamed run past its deadline fails with DEADLINE_EXCEEDED", TIMEOUT, async () => {
    let failure!: { error: unknown; received: number };
    const called = await methodsOf(async () => {
      failure = await failureOf(observed.runSuite({ compact, cases: cases(20_000) }, { timeoutMs: 50 }));
    });
    assert.deepEqual(called, [RUN_SUITE_STREAM]);
    expectCode(failure.error, Status.DEADLINE_EXCEEDED);
  });
});

describe("RunSuite with a checkllm suite", () => {
  const suiteYaml = CHECKLLM_SUITE;
  const providers = CHECKLLM_PROVIDERS;
  const recorded = CHECKLLM_RECORDED;

  test("each result names its combination and the summary has the matrix", TIMEOUT, async () => {
    const run = live.client.runSuite({ suiteYaml, cases: recorded });
    const results: CaseResult[] = [];
    for await (const result of run) results.push(result);
    assert.equal(results.length, 8);
    for (const r of results) {
      const combo = r.combination!;
      assert.equal(r.passed, !(combo.prompt === 1 && combo.provider.startsWith("anthropic")), JSON.stringify(combo));
      assert.equal(r.generated, false);
    }
    const summary = await run.summary();
    assert.equal(summary.casesPassed, 6);
    assert.deepEqual(
      summary.matrix.map((c) => [c.prompt, c.provider, c.cases, c.casesPassed]),
      [
        [0, providers[0], 2, 2],
        [0, providers[1], 2, 2],
        [1, providers[0], 2, 2],
        [1, providers[1], 2, 0],
      ],
    );
  });

  test("a missing combination is INVALID_ARGUMENT naming it", TIMEOUT, async () => {
    const run = live.client.runSuite({ suiteYaml, cases: recorded.slice(1) });
    const err = await run.summary().then(
      () => assert.fail("a run missing a combination ran"),
      (e: unknown) => e,
    );
    const error = expectCode(err, Status.INVALID_ARGUMENT);
    assert.deepEqual(
      error.fieldViolations.map((v) => [v.field, v.description]),
      [["cases", 'no case for tests[0] ("France") × prompts[0] × openai:gpt-4o-mini']],
    );
  });
});

describe("ScoreStream", () => {
  test("every case is answered once under its request id", TIMEOUT, async () => {
    const stream = live.client.scoreStream({ compact: ["contains:Northstar"] });
    const sent = cases(20);
    for (const [i, c] of sent.entries()) await stream.send({ requestId: `r${i}`, ...c });
    stream.end();
    const passedById = new Map<string, boolean>();
    for await (const response of stream) {
      assert.ok(!passedById.has(response.requestId), `${response.requestId} answered twice`);
      passedById.set(response.requestId, response.passed);
      assert.equal(response.scores.length, 1);
    }
    assert.deepEqual(
      new Map([...passedById].sort()),
      new Map(sent.map((_, i) => [`r${i}`, i % 2 === 0] as const).sort()),
    );
  });
});

describe("ScoreStream refused", () => {
  test("a refusal that arrives before the iteration starts still fails it", TIMEOUT, async () => {
    // The config is refused while the caller is still sending; reading only afterwards
    // must give the server's INVALID_ARGUMENT, not an empty stream that ends cleanly.
    const stream = live.client.scoreStream({ checks: [{ type: "output_length", params: { max_wrds: 3 } }] });
    for (const [i, c] of cases(3).entries()) await stream.send({ requestId: `r${i}`, ...c });
    stream.end();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const response of stream) seen.push(response.requestId);
      })(),
      (e: unknown) => expectCode(e, Status.INVALID_ARGUMENT).fieldViolations.length > 0,
    );
    assert.deepEqual(seen, []);
  });
});

describe("LabelService", () => {
  /** A sample id no other test or run uses. */
  const freshSample = (): string => `ts-labels-${randomUUID()}`;
  const label = (sampleId: string, output: string) => ({
    sampleId,
    outputHash: outputHash(output),
    passed: true,
    labeller: "ann",
  });

  test("putLabels then listLabels returns the label as stored", TIMEOUT, async () => {
    const sampleId = freshSample();
    const put = await live.client.putLabels({ labels: [label(sampleId, "Northstar")] });
    assert.equal(put.labels.length, 1);
    assert.equal(put.labels[0]!.check, "default"); // filled in by the server
    assert.ok(put.labels[0]!.createdAt instanceof Date);
    const page = await live.client.listLabels({ sampleId });
    assert.deepEqual(
      page.labels.map((l) => [l.outputHash, l.passed, l.labeller]),
      [[outputHash("Northstar"), true, "ann"]],
    );
    assert.equal(page.nextPageToken, "");
  });

  test("a fresh requestId per call; the same requestId twice stores once", TIMEOUT, async () => {
    const sampleId = freshSample();
    const request = { labels: [label(sampleId, "Northstar")] };
    await live.client.putLabels(request);
    await live.client.putLabels(request);
    assert.equal("requestId" in request, false, "the caller's request was modified");
    const requestId = randomUUID();
    await live.client.putLabels({ ...request, requestId });
    await live.client.putLabels({ ...request, requestId }); // a retry: nothing new
    const history = await live.client.listLabels({ sampleId, includeHistory: true });
    assert.equal(history.labels.length, 3);
  });

  test("listLabels pages with nextPageToken", TIMEOUT, async () => {
    const sampleId = freshSample();
    await live.client.putLabels({ labels: ["a", "b", "c"].map((o) => label(sampleId, o)) });
    const first = await live.client.listLabels({ sampleId, pageSize: 2 });
    assert.equal(first.labels.length, 2);
    assert.notEqual(first.nextPageToken, "");
    const second = await live.client.listLabels({ sampleId, pageSize: 2, pageToken: first.nextPageToken });
    assert.equal(second.labels.length, 1);
    assert.equal(second.nextPageToken, "");
  });

  test("a bad output hash is INVALID_ARGUMENT naming labels[0].output_hash", TIMEOUT, async () => {
    const bad = { ...label(freshSample(), "x"), outputHash: "nothex" };
    const err = await live.client.putLabels({ labels: [bad] }).then(
      () => assert.fail("putLabels accepted a bad hash"),
      (e: unknown) => e,
    );
    const swErr = expectCode(err, Status.INVALID_ARGUMENT);
    assert.ok(swErr.fieldViolations.some((v) => v.field === "labels[0].output_hash"), JSON.stringify(swErr.fieldViolations));
  });
});

describe("RunService", () => {
  const compact = ["contains:Paris", "length:1..100"];
  /** Three cases s0..s2; s0's output lacks "Paris". */
  const parisCases = () =>
    [0, 1, 2].map((i) => ({
      sample: { id: `s${i}`, input: { question: "capital?", n: i } },
      output: { text: i === 0 ? "no idea" : `answer ${i}: Paris` },
    }));

  test("a recorded run reads back, compares with a regressed run, and is deleted", TIMEOUT, async () => {
    const runName = `ts-runs-${randomUUID()}`;
    /** Records a run of `runCases` under runName and returns its summary. */
    const record = async (runCases: ReturnType<typeof parisCases>, baseline?: string) => {
      const summary = await live.client
        .runSuite({ compact, cases: runCases, record: true, runName, ...(baseline ? { gate: { baseline } } : {}) })
        .summary();
      assert.notEqual(summary.runId, "", "the run was not recorded");
      return summary;
    };
    const base = await record(parisCases());
    const worse = parisCases();
    worse[1]!.output.text = "Berlin"; // s1 passed contains:Paris, fails now
    const now = await record(worse, base.runId);
    assert.equal(now.gatePassed, false, "the gate passed against a baseline it regressed from");

    const page = await live.client.listRuns({ name: runName });
    assert.deepEqual(
      page.runs.map((r) => r.runId),
      [now.runId, base.runId], // newest first
    );

    const run = await live.client.getRun(base.runId);
    assert.equal(run.runId, base.runId);
    assert.equal(run.name, runName);
    assert.equal(run.status, RunStatus.RUN_STATUS_COMPLETE);
    assert.equal(run.results, 3);
    assert.equal(run.summary?.cases, 3);

    const failed = await live.client.listRunResults({
      runId: now.runId,
      check: "contains:Paris",
      outcome: Outcome.OUTCOME_FAILED,
    });
    assert.deepEqual(
      failed.results.map((r) => r.result?.sampleId).sort(),
      ["s0", "s1"], // "no idea" and "Berlin"
    );

    const cmp = await live.client.compareRuns(base.runId, now.runId);
    assert.deepEqual(
      cmp.regressed.map((c) => [c.sampleId, c.checks]),
      [["s1", ["contains:Paris"]]],
    );
    assert.equal(cmp.regressedTotal, 1);

    await live.client.deleteRun(now.runId);
    await assert.rejects(live.client.getRun(now.runId), (e: unknown) => expectCode(e, Status.NOT_FOUND) !== undefined);
    // The base run is untouched.
    assert.equal((await live.client.getRun(base.runId)).status, RunStatus.RUN_STATUS_COMPLETE);
  });

  test("a run sent in parts is one run; closing it twice is FAILED_PRECONDITION", TIMEOUT, async () => {
    const runId = await live.client.openRun({ runName: "ts-parts", record: true });
    assert.notEqual(runId, "");
    const summaries = [];
    for (const [firstIndex, text] of ["Paris", "Rome"].entries()) {
      const cases = [{ sample: { id: text }, output: { text } }];
      summaries.push(await live.client.runSuite({ compact, cases, part: { runId, firstIndex } }).summary());
    }
    const summary = mergeSummaries(summaries);
    await live.client.closeRun({ runId, summary });
    const run = await live.client.getRun(runId);
    assert.deepEqual([run.status, run.results, run.summary?.casesPassed], [RunStatus.RUN_STATUS_COMPLETE, 2, 1]);
    await assert.rejects(live.client.closeRun({ runId, summary }), (e: unknown) =>
      expectCode(e, Status.FAILED_PRECONDITION).details.includes(runId),
    );
    await live.client.deleteRun(runId);
  });

  test("listRuns and listRunResults page with nextPageToken: every run and result once", TIMEOUT, async () => {
    const runName = `ts-runs-paging-${randomUUID()}`;
    const recorded: string[] = [];
    for (let i = 0; i < 3; i++) {
      const summary = await live.client.runSuite({ compact, cases: parisCases(), record: true, runName }).summary();
      assert.notEqual(summary.runId, "", "the run was not recorded");
      recorded.push(summary.runId);
    }
    const first = await live.client.listRuns({ name: runName, pageSize: 2 });
    assert.equal(first.runs.length, 2);
    assert.notEqual(first.nextPageToken, "", "a first page of 2 of 3 runs has a next page");
    const second = await live.client.listRuns({ name: runName, pageSize: 2, pageToken: first.nextPageToken });
    assert.equal(second.nextPageToken, "", "the second page is the last");
    assert.deepEqual(
      [...first.runs, ...second.runs].map((r) => r.runId),
      [...recorded].reverse(), // every run once, newest first
    );

    // One run with 5 results, read 2 at a time: pages of 2, 2 and 1.
    const five = Array.from({ length: 5 }, (_, i) => ({
      sample: { id: `p${i}` },
      output: { text: `answer ${i}: Paris` },
    }));
    const run = await live.client.runSuite({ compact, cases: five, record: true, runName }).summary();
    const seen: string[] = [];
    const sizes: number[] = [];
    let pageToken = "";
    do {
      const page = await live.client.listRunResults({ runId: run.runId, pageSize: 2, pageToken });
      sizes.push(page.results.length);
      seen.push(...page.results.map((r) => r.result?.sampleId ?? ""));
      pageToken = page.nextPageToken;
    } while (pageToken !== "" && sizes.length < 10);
    assert.deepEqual(sizes, [2, 2, 1]);
    assert.deepEqual([...seen].sort(), ["p0", "p1", "p2", "p3", "p4"]); // each exactly once
  });

  test("deleteRun of a run still recording is FAILED_PRECONDITION", TIMEOUT, async () => {
    const runName = `ts-runs-running-${randomUUID()}`;
    const stream = live.client.scoreStream({ compact, record: true, runName });
    const responses = stream[Symbol.asyncIterator]();
    try {
      await stream.send({ requestId: "r0", sample: { id: "s0" }, output: { text: "Paris" } });
      // The server creates the run before it scores the first case, so once a response
      // is back the run exists; the stream stays open, so it is still running.
      const answered = await responses.next();
      assert.equal(answered.done, false);
      const listed = await live.client.listRuns({ name: runName });
      assert.equal(listed.runs.length, 1);
      const running = listed.runs[0]!;
      assert.equal(running.status, RunStatus.RUN_STATUS_RUNNING);
      assert.equal(running.source, "ScoreStream");

      const err = await live.client.deleteRun(running.runId).then(
        () => assert.fail("deleteRun deleted a running run"),
        (e: unknown) => e,
      );
      const swErr = expectCode(err, Status.FAILED_PRECONDITION);
      assert.match(swErr.details, /still running/);
      assert.equal((await live.client.getRun(running.runId)).status, RunStatus.RUN_STATUS_RUNNING);

      // Once the stream ends, the run is complete and can be deleted.
      stream.end();
      let rest = await responses.next();
      while (!rest.done) rest = await responses.next();
      assert.equal((await live.client.getRun(running.runId)).status, RunStatus.RUN_STATUS_COMPLETE);
      await live.client.deleteRun(running.runId);
      await assert.rejects(
        live.client.getRun(running.runId),
        (e: unknown) => expectCode(e, Status.NOT_FOUND) !== undefined,
      );
    } finally {
      stream.cancel();
    }
  });

  test("getRun of an unknown id is NOT_FOUND", TIMEOUT, async () => {
    await assert.rejects(
      live.client.getRun(`no-such-run-${randomUUID()}`),
      (e: unknown) => expectCode(e, Status.NOT_FOUND) !== undefined,
    );
  });
});
