// Score a batch as an evaluation job: create it, wait for its end, read its aggregations.
import { ScorewireClient, ScorewireError, jobStateToJSON } from "@scorewire/client";

const cases = [
  { sample: { id: "q1" }, output: { text: "Paris is the capital of France." } },
  { sample: { id: "q2" }, output: { text: "Lyon, I think." } },
  { sample: { id: "q3" }, output: { text: "It is Paris." } },
  { sample: { id: "q4" }, output: { text: "Paris." } },
];

async function main(): Promise<void> {
  const client = new ScorewireClient(process.env.SCOREWIRE_ADDRESS ?? "127.0.0.1:50051");
  try {
    // Stored once created: the program could exit now and read the job later by its id.
    const job = await client.createJob(
      { compact: ["contains:Paris", "length:1..40"], name: "capitals", labels: { team: "geo" } },
      cases,
    );
    console.log("created:", jobStateToJSON(job.state), job.casesTotal, "cases");

    // waitJob watches the job (watchJob yields each change of its progress) to its end.
    const done = await client.waitJob(job.jobId);
    console.log("ended:", jobStateToJSON(done.state), `${done.casesDone}/${done.casesTotal}`);
    const run = await client.getRun(done.runId); // the job's recorded run
    console.log("run:", run.name, run.results, "results");
    for (const a of done.aggregations) {
      console.log(`${a.name}: average ${a.average.toFixed(2)}, median ${a.median.toFixed(2)}, p95 ${a.p95.toFixed(2)}`);
    }

    // A job that has ended cannot be cancelled: refused naming the field.
    try {
      await client.cancelJob(job.jobId);
    } catch (err) {
      if (!(err instanceof ScorewireError)) throw err;
      for (const v of err.fieldViolations) console.log("cancel:", err.codeName, v.field);
    }
  } finally {
    client.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
