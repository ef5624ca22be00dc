// Hand each answer to scorewire for online evaluation; observe() never blocks or throws.
import { type Observer, ScorewireClient } from "@scorewire/client";

/** A request handler: answer, then observe (it returns at once). */
function answer(observer: Observer, question: string, traceId: string): string {
  const text = "Paris is the capital of France."; // your model's output
  observer.observe({
    sample: { input: question },
    output: { text },
    trace: { traceId }, // your trace's id (32 hex digits), or "" for none
    metadata: { route: "/answer", model: "my-model" },
  });
  return text;
}

async function main(): Promise<void> {
  const client = new ScorewireClient(process.env.SCOREWIRE_ADDRESS ?? "127.0.0.1:50051");
  const observer = client.observer({ bufferSize: 10_000 });
  console.log(answer(observer, "capital of France", ""));
  // At shutdown: send what is buffered, for at most 5 s.
  await observer.close(5_000);
  client.close();
  const { queued, duplicate, dropped } = observer.stats();
  const lost = Object.values(dropped).reduce((a, b) => a + b, 0);
  console.log(`acknowledged: ${queued + duplicate}, dropped: ${lost}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
