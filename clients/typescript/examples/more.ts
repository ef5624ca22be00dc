// The calls beyond a first score: compact checks, a suite run, an error that names its
// field, human labels, and two recorded runs compared.
import { ScorewireClient, ScorewireError, outputHash } from "@scorewire/client";

async function main(): Promise<void> {
  const client = new ScorewireClient(process.env.SCOREWIRE_ADDRESS ?? "127.0.0.1:50051"); // dns:///, round_robin, keepalive
  try {
    // Compact checks ("type:argument") beside a full one; regex is Python re syntax.
    const { scores, passed } = await client.score({
      output: { text: "Northstar ships it." },
      compact: ["contains:Northstar", "length:10..500"],
      checks: [{ type: "regex", params: { pattern: "\\bnorthstar\\b", flags: ["IGNORECASE"] } }],
    });
    console.log("score:", passed, scores.map((s) => s.name).join(" "));

    // A suite run yields each case's result once, as it finishes; then the summary.
    const cases = [{ output: { text: "Northstar" } }, { output: { text: "hi" } }];
    const { results, summary } = await client.runSuite({ compact: ["contains:Northstar"], cases }).collect();
    for (const r of results.sort((a, b) => a.index - b.index)) console.log("case", r.index, r.passed);
    console.log("pass rate:", summary.passRate, "gate passed:", summary.gatePassed);

    // Bad input is refused naming the field: a ScorewireError with fieldViolations.
    try {
      await client.score({ output: { text: "x" }, checks: [{ type: "no_such_check" }] });
    } catch (err) {
      if (!(err instanceof ScorewireError)) throw err;
      for (const v of err.fieldViolations) console.log(err.codeName, v.field);
    }

    // Human labels, which the `human` check reads; the requestId is fresh per call.
    await client.putLabels({ labels: [{ sampleId: "q1", outputHash: outputHash("hi"), passed: true, labeller: "ann" }] });
    const { labels } = await client.listLabels({ sampleId: "q1", outputHash: outputHash("hi"), labeller: "ann" });
    for (const l of labels) console.log("label:", l.labeller, l.passed);

    // Recorded runs: record two, list them (newest first), compare the later with the first.
    const nightly = { compact: ["contains:Northstar"], record: true, runName: "nightly" };
    const base = await client.runSuite({ ...nightly, cases: [{ sample: { id: "q1" }, output: { text: "Northstar" } }] }).summary();
    const now = await client.runSuite({ ...nightly, cases: [{ sample: { id: "q1" }, output: { text: "hi" } }] }).summary();
    const { runs } = await client.listRuns({ name: "nightly" });
    console.log("newest is the later run:", runs[0]?.runId === now.runId);
    const { regressed } = await client.compareRuns(base.runId, now.runId);
    for (const c of regressed) console.log("regressed:", c.sampleId, c.checks.join(" "));
  } finally {
    client.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
