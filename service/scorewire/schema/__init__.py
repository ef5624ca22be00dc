"""JSON Schema validation for the checks that read it.

`full` compiles full JSON Schema (the `json_schema` check) with RE2-backed `pattern`;
`subset` is seed 002's JSON Schema subset v1 validator (the compact `json_schema_v1`).
Imports only `scorewire.core` and `scorewire.regex`.
"""
