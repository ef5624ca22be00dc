// Score two answers with three deterministic checks on a scorewire server.
import { ScorewireClient } from "@scorewire/client";

const address = process.env.SCOREWIRE_ADDRESS ?? "127.0.0.1:50051";
const checks = [
  { type: "contains", params: { needles: ["Paris", "France"] } }, // value: share found
  { type: "regex", params: { pattern: "\\bcapital\\b", flags: ["IGNORECASE"] } },
  { type: "length", params: { max_chars: 40 } },
];
const answers = {
  q1: "The capital of France is Paris.",
  q2: "Lyon is the capital of France, I think, but I am not sure.",
};

const verdict = (passed: boolean) => (passed ? "pass" : "fail");

async function main(): Promise<void> {
  const client = new ScorewireClient(address);
  try {
    for (const [id, text] of Object.entries(answers)) {
      const { passed, scores } = await client.score({ sample: { id }, output: { text }, checks });
      console.log(`${id}: ${verdict(passed)}`);
      for (const s of scores) console.log(`  ${s.name.padEnd(9)} ${verdict(s.passed)} ${s.value.toFixed(2)}`);
    }
  } finally {
    client.close();
  }
}

main().catch((err: unknown) => {
  console.error(err); // a ScorewireError: its code, details and fieldViolations
  process.exitCode = 1;
});
