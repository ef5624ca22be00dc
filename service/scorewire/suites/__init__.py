"""Suite formats: how a YAML or compact document becomes a plan and cases.

`evalstone` (the native `checks:`/`suites:` format), `checkllm` (prompts x providers x
tests, seed 001) with `checkllm_assertions` (its assertion types mapped to checks),
`compact` (seed 002's one-line and JSON-array forms) and `bounded_yaml` (YAML parsing
with size, alias and depth limits). Suites sit above the engine and generation; nothing
below them imports them.
"""
