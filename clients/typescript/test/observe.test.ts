// The Observer against a real scorewire server (its rule: tests/clients/observe_rules.yaml),
// and against an address nothing listens on.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import * as net from "node:net";
import { describe, test } from "node:test";

import { ScorewireClient } from "../src";
import { useLiveServer } from "./live";

const TIMEOUT = { timeout: 120_000 };

const live = useLiveServer(TIMEOUT);

/** An address nothing listens on: a port just closed. */
async function unreachable(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `127.0.0.1:${port}`;
}

/** Sample id -> passed, for every observation the rule `clients` has scored. */
async function scored(client: ScorewireClient): Promise<Map<string, boolean>> {
  const seen = new Map<string, boolean>();
  const { runs } = await client.listRuns({ labels: { observe_rule: "clients" } });
  for (const run of runs) {
    let pageToken = "";
    do {
      const page = await client.listRunResults({ runId: run.runId, pageSize: 1000, pageToken });
      for (const r of page.results) seen.set(r.result?.sampleId ?? "", r.result?.passed ?? false);
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
  }
  return seen;
}

const observation = (id: string, text: string) => ({
  observationId: id,
  sample: { input: "capital of France?" },
  output: { text },
  trace: { traceId: randomBytes(16).toString("hex"), spanId: randomBytes(8).toString("hex") },
  metadata: { route: "/ts-test", labels: { env: "test" } },
});

describe("Observer", () => {
  test("observations arrive and are scored", TIMEOUT, async () => {
    const observer = live.client.observer({ flushIntervalMs: 50 });
    const want = new Map([
      [`ts-${randomUUID()}`, true],
      [`ts-${randomUUID()}`, false],
    ]);
    for (const [id, pass] of want) assert.equal(observer.observe(observation(id, pass ? "Paris" : "Lyon")), true);
    assert.equal(await observer.flush(20_000), true);
    const stats = observer.stats();
    assert.deepEqual([stats.queued, stats.buffered, stats.retries], [2, 0, 0]);
    assert.equal(await observer.close(), true);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const seen = await scored(live.client);
      if ([...want.keys()].every((id) => seen.has(id))) {
        for (const [id, pass] of want) assert.equal(seen.get(id), pass, id);
        break;
      }
      assert.ok(Date.now() < deadline, "observations not scored within 20 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  test("a full buffer drops and counts instead of blocking", TIMEOUT, async () => {
    const client = new ScorewireClient(await unreachable());
    const observer = client.observer({
      bufferSize: 10,
      batchSize: 5,
      flushIntervalMs: 10,
      maxAttempts: 1000,
      initialBackoffMs: 10,
      maxBackoffMs: 50,
    });
    let taken = 0;
    let slowest = 0;
    for (let i = 0; i < 200; i++) {
      const start = performance.now();
      if (observer.observe(observation(`o${i}`, "Paris"))) taken += 1;
      slowest = Math.max(slowest, performance.now() - start);
      if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 20)); // the sender tries, and fails
    }
    let stats = observer.stats();
    assert.deepEqual([taken, stats.accepted, stats.dropped.buffer_full], [10, 10, 190]);
    assert.ok(stats.retries > 0, "no retry against an unreachable server");
    // Far above a busy machine's scheduling hiccups, far below a call waiting on retries.
    assert.ok(slowest < 250, `the slowest observe() took ${slowest} ms`);
    const start = Date.now();
    assert.equal(await observer.close(200), false);
    assert.ok(Date.now() - start < 2_000, "close() overran its deadline");
    stats = observer.stats();
    assert.deepEqual([stats.dropped.closed, stats.buffered], [10, 0]);
    assert.equal(observer.observe(observation("late", "Paris")), false);
    client.close();
  });

  test("retries are bounded", TIMEOUT, async () => {
    const client = new ScorewireClient(await unreachable());
    const observer = client.observer({ maxAttempts: 3, initialBackoffMs: 1 });
    observer.observe(observation("once", "Paris"));
    assert.equal(await observer.flush(10_000), true);
    const stats = observer.stats();
    assert.deepEqual([stats.dropped.retries_exhausted, stats.retries], [1, 2]);
    await observer.close();
    client.close();
  });

  test("what the server refuses is dropped, not retried, the rest of its batch sent; bad input never throws", TIMEOUT, async () => {
    const observer = live.client.observer();
    observer.observe({ ...observation(`ts-${randomUUID()}`, "Paris"), metadata: { route: "r".repeat(1000) } });
    observer.observe(observation(`ts-${randomUUID()}`, "Paris")); // the same batch, good
    assert.equal(observer.observe({ output: { text: "Paris" }, trace: { traceId: "not-hex" } }), false);
    assert.equal(observer.observe(null as never), false);
    assert.equal(await observer.close(20_000), true);
    const stats = observer.stats();
    assert.deepEqual([stats.dropped.rejected, stats.queued, stats.dropped.invalid, stats.retries], [1, 1, 2, 0]);
  });

  test("close flushes", TIMEOUT, async () => {
    const observer = live.client.observer({ flushIntervalMs: 3_600_000, batchSize: 1000 });
    for (let i = 0; i < 5; i++) observer.observe(observation(`ts-${randomUUID()}`, "Paris"));
    assert.equal(await observer.close(20_000), true);
    const stats = observer.stats();
    assert.deepEqual([stats.queued, stats.buffered], [5, 0]);
  });
});
