// A checkllm suite with every combination's output recorded, for the tests that run one
// against the live server (client and shards tests).

/** The suite's providers, in the document's order. */
export const CHECKLLM_PROVIDERS = ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku"];

/** Seed 001's format, sent as it is: 2 tests x 2 prompts x 2 providers. */
export const CHECKLLM_SUITE = [
  'prompts: ["Answer: {{query}}", "Be brief. {{query}}"]',
  `providers: [${CHECKLLM_PROVIDERS.map((p) => JSON.stringify(p)).join(", ")}]`,
  "tests:",
  '  - {description: France, vars: {query: "Capital of France?"}, assert: [{type: contains, value: Paris}]}',
  '  - {description: Italy, vars: {query: "Capital of Italy?"}, assert: [{type: contains, value: Rome}]}',
].join("\n");

/** Every combination of CHECKLLM_SUITE recorded; the anthropic answers to prompt 1 are wrong. */
export const CHECKLLM_RECORDED = ["France", "1"].flatMap((test) =>
  ["0", "1"].flatMap((prompt) =>
    CHECKLLM_PROVIDERS.map((provider) => ({
      test,
      prompt,
      provider,
      output: { text: prompt === "1" && provider.startsWith("anthropic") ? "no idea" : "Paris, Rome" },
    })),
  ),
);
