"""Helpers shared by the test packages; import them from here rather than copy them.

- `checks`: one check compiled and run in process (`score`, `load_errors`).
- `components`: real components a test needs (`require_component`, `require_binary`),
  skipped on a developer's machine, a failure under CI (`under_ci`).
- `judge`: a JudgeService wired to the LLM protocol stand-ins (`judge_harness`).
- `loop_lag`: how long anything held an event loop, measured from inside it
  (`LoopLagProbe`), for benchmarks: never for assertions on time.
- `otlp`: a real OTLP/gRPC trace receiver in process (`OtlpReceiver`).
- `pki`: certificates made at test time (the `pki` fixture).
- `redis`: a throwaway redis-server (`RedisServer`, the `redis_server` fixture), with ACL
  users or TLS when asked.
- `replicas`: several `scorewire serve` processes sharing one Redis and the stand-in
  judge (`Replicas`, `replica_env`).
- `rpc`: reading gRPC answers (`bad_request`, `violations`, `first_message`).
- `servers`: `scorewire serve` as a child process, a free port, reading its output.
- `wait`: polling a condition with a timeout instead of sleeping (`wait_until`).
"""
