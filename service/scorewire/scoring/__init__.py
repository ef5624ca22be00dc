"""The scoring layer: one compiler and one executor for every entry point.

A request, whatever its shape (a unary Score, a RunSuite, a ScoreStream, a checkllm
document, the CLI's files, the in-process API), becomes a `PlanSource`; `compile_plan`
turns a source into a compiled plan; an `Executor` decides where the plan's cases are
scored (see `executor`), and the worker pool scores them with the engine in processes
of their own.
"""
