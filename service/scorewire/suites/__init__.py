"""Suite formats: how a YAML or compact document becomes a plan and cases.

`evalstone` (the native `checks:`/`suites:` format) with `evalstone_checks` (its checks
written inline or compact) and `evalstone_request` (the suite a request describes);
`checkllm` (prompts x providers x tests, seed 001) with `checkllm_suite` (the loaded
suite and its jobs), `checkllm_sections` (its judge, settings, prompts and providers),
`checkllm_tests` (its tests), `checkllm_assertions` (its assertion types mapped to
checks) and `checkllm_request` (a checkllm suite sent in a request); `compact` (seed
002's one-line and JSON-array forms); `yaml_document` (a suite document's text as data,
within the request's limits) and `bounded_yaml` (YAML parsing with size, alias and depth
limits). Suites sit above the engine and generation; nothing below them imports them.
"""
