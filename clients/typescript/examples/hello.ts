// Score an answer with three deterministic checks on a scorewire server.
import { ScorewireClient } from "@scorewire/client";

const checks = [
  { type: "contains", params: { needles: ["Paris", "France"] } }, // value: share found
  { type: "regex", params: { pattern: "\\bcapital\\b", flags: ["IGNORECASE"] } },
  { type: "length", params: { max_chars: 40 } },
];

async function main(): Promise<void> {
  const client = new ScorewireClient(process.env.SCOREWIRE_ADDRESS ?? "127.0.0.1:50051");
  try {
    const { passed, scores } = await client.score({ output: { text: "Lyon is the capital of France." }, checks });
    for (const s of scores) console.log(`${s.name.padEnd(9)} ${s.passed ? "pass" : "fail"} ${s.value.toFixed(2)}`);
    console.log(`passed: ${passed}`);
  } finally {
    client.close();
  }
}

main().catch((err: unknown) => {
  console.error(err); // a ScorewireError: its code, details and fieldViolations
  process.exitCode = 1;
});
