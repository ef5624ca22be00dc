"""The one typed settings object, read from `SCOREWIRE_*` environment variables once.

Tests construct `Settings(...)` directly; `main` reads the environment. Everything that
needs configuration takes the object (or the part of it it needs) as an argument.

`Settings` is composed of one model per purpose: a new setting goes into the part of its
purpose and stays flat (read from `SCOREWIRE_<FIELD>`); its docstring is its documentation.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from scorewire.core.judge_watch import JudgeWatchSettings
from scorewire.settings.jobs import JobSettings
from scorewire.settings.observe import ObserveSettings


class TransportSettings(BaseModel):
    """Where the gRPC server listens and how it keeps its connections."""

    host: str = "127.0.0.1"
    """Address the gRPC server binds to."""
    port: int = Field(50051, ge=0, le=65535)
    """gRPC port; 0 picks a free one (tests)."""
    workers: int = Field(1, ge=1, le=64)
    """Server processes sharing the port (SO_REUSEPORT)."""
    max_message_bytes: int = Field(64 * 1024 * 1024, ge=1024)
    """Largest gRPC message accepted or sent, in bytes."""
    keepalive_time_s: float = Field(30.0, gt=0)
    """Seconds between keepalive pings the server sends on idle connections."""
    keepalive_timeout_s: float = Field(10.0, gt=0)
    """Seconds to wait for a keepalive ack before closing the connection."""
    grace_period_s: float = Field(20.0, ge=0)
    """On SIGTERM, seconds in-flight calls get to finish before they are cancelled."""


class ScoringSettings(BaseModel):
    """How big a request may be and how its cases are scored: timeouts, workers, tenants."""

    max_cases_per_request: int = Field(100_000, ge=1)
    """Most cases one RunSuite request may carry."""
    max_checks_per_request: int = Field(64, ge=1)
    """Most checks (structured plus compact) one request may carry."""
    max_output_bytes: int = Field(10 * 1024 * 1024, ge=1)
    """Largest output text (UTF-8 bytes) one case may carry."""
    max_concurrency: int = Field(64, ge=1)
    """Cases scored at once per RunSuite when checks need the event loop (judges)."""
    check_timeout_s: float = Field(120.0, gt=0)
    """Per-check timeout in seconds, unless a suite's `settings.check_timeout_s` sets one;
    the request deadline bounds it further."""
    scoring_workers: int | None = Field(None, ge=1, le=256)
    """Worker processes that run deterministic checks and compile plans; default the
    core count. They keep the event loop free: a check that runs past check_timeout_s, or a
    request whose deadline passes, has its worker killed and replaced."""
    native_kernel: bool = True
    """Score RunSuite chunks in the native kernel (`service/native`) when it is installed:
    the deterministic checks' common paths run natively, everything else in Python, with
    the same results. False scores every check in Python (to compare, or to rule it out)."""
    suite_chunks_in_flight: int | None = Field(None, ge=1, le=256)
    """Chunks of one RunSuite's cases in the scoring workers at once; default every worker
    but one, and at least two, so a big run scores on more than one core while a larger
    pool keeps a worker for other requests. Other callers' jobs do not queue behind them:
    each caller's jobs are taken in turn (`tenant_max_workers`)."""
    tenant_max_workers: int | None = Field(None, ge=1, le=256)
    """Most scoring workers one tenant (a token's name) holds at once; default every
    worker but one, so that a tenant with work for every worker still leaves one to the
    next tenant. Jobs wait in a queue per tenant (per connection when auth is off, with
    no cap), taken in turn (weighted round robin, `tenant_weights`)."""
    tenant_weights: dict[str, float] = Field(default_factory=dict)
    """A tenant's share of the scoring workers and of each judge backend's concurrency,
    relative to others waiting, by tenant name (JSON in the env, e.g. `{"batch": 0.5}`);
    a tenant not named weighs 1."""
    plan_compile_timeout_s: float = Field(30.0, gt=0)
    """Seconds a scoring worker may spend compiling one request's checks (loading a
    tokenizer or language model included) before it is killed: RESOURCE_EXHAUSTED."""
    inline_score_max_bytes: int = Field(16_384, ge=0)
    """A Score request up to this size whose plan workers compiled and scored cheaply is
    scored on the event loop (several times faster than a worker round trip); 0 sends
    every Score to the workers."""
    scoring_worker_max_rss_mb: int = Field(768, ge=64)
    """A scoring worker whose resident memory is above this after a job is replaced by a
    fresh one (huge plans and allocator high-water marks do not stay). Each worker loads
    its own `language` models (up to max_languages_loaded, ~600 MB): keep room for them."""

    @field_validator("tenant_weights")
    @classmethod
    def _weights_are_positive(cls, value: dict[str, float]) -> dict[str, float]:
        for name, weight in value.items():
            if not 0 < weight < math.inf:
                raise ValueError(f"the weight of {name!r} must be a finite number > 0")
        return value


class RequestCostSettings(BaseModel):
    """What one request may cost to load and score, each refused naming its setting."""

    max_patterns_per_request: int = Field(64, ge=1)
    """Most regular expressions one request compiles: `regex`, compact `regex:` and every
    `pattern`/`patternProperties` key inside JSON Schemas."""
    max_pattern_chars_per_request: int = Field(16_384, ge=1)
    """Most characters of regular expressions, summed over one request."""
    max_regex_program_size_per_request: int = Field(262_144, ge=1024)
    """Most RE2 program instructions one request's patterns compile to, summed.

    Compile time follows program size (`\\d{1000}` is 84,000 instructions and ~80 ms): this
    keeps one request's compilation to a fraction of a second.
    """
    max_needles_per_request: int = Field(256, ge=1)
    """Most literal needles and phrases (`contains`, `not_contains`, `safety.forbidden`,
    compact `contains:`) one request carries; each one is a scan of every output."""
    max_needle_chars_per_request: int = Field(65_536, ge=1)
    """Most characters of needles and phrases, summed over one request."""
    max_schema_bytes_per_request: int = Field(65_536, ge=1)
    """Most bytes of JSON Schema (compact JSON) one request carries, summed over schemas."""
    max_schema_keywords_per_request: int = Field(2_048, ge=1)
    """Most keys in JSON Schema objects one request carries, summed over schemas."""
    max_languages_per_request: int = Field(4, ge=1)
    """Most distinct `language` codes one request names: each may load a language model."""
    max_languages_loaded: int = Field(20, ge=12)
    """Most languages whose detection models the process keeps (the twelve of every
    `language` check, ~300 MB, plus ~20-35 MB each); a request needing one more is
    refused. Models load once per process and are shared by every request."""
    max_check_name_chars: int = Field(1_024, ge=1)
    """Longest check name (a compact line is its own name); names are sent in every score."""
    max_example_chars_per_request: int = Field(262_144, ge=1)
    """Most characters of check `examples`, summed over one request: each is scored when
    the request loads (the check's self-test)."""
    max_suite_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    """Largest suite document (`suite_yaml`: evalstone or checkllm), in UTF-8 bytes."""
    max_suite_expanded_bytes: int = Field(64 * 1024 * 1024, ge=1024)
    """Most bytes a suite document may grow to once its YAML aliases are expanded,
    counted as compact JSON before anything is built: what one walk over it (validating,
    serializing, templating) may write. A document without aliases is bounded by
    max_suite_bytes instead."""
    max_suite_expanded_nodes: int = Field(1_000_000, ge=1_000)
    """Most values (strings, numbers, lists, mappings) a suite document may hold once its
    YAML aliases are expanded: what one walk over it may visit."""
    max_prompt_chars_per_request: int = Field(16 * 1024 * 1024, ge=1)
    """Most characters of prompts a checkllm suite's templates render to with its tests'
    `vars`, summed over tests × prompts; counted before any prompt is rendered."""
    max_reason_chars: int = Field(4_096, ge=64)
    """Longest score reason or error message sent; longer ones are cut, marked with `…`."""
    max_metric_input_bytes_per_case: int = Field(4 * 1024 * 1024, ge=1)
    """Most output bytes one case feeds to whole-text checks (`max_tokens`, `min_tokens`,
    `word_count`, `bleu`, `rouge_l`, `is_valid_python`), summed over those checks."""
    plan_cache_bytes: int = Field(64 * 1024 * 1024, ge=0)
    """Most bytes of compiled plans kept for reuse, estimated from their request's size;
    0 turns the cache off."""


class SecuritySettings(BaseModel):
    """Who may call (TLS, bearer tokens, calls in flight) and which Python code runs."""

    tls_cert: str | None = None
    """PEM certificate chain file; with tls_key, the server speaks TLS."""
    tls_key: str | None = None
    """PEM private key file of tls_cert."""
    tls_client_ca: str | None = None
    """PEM CA bundle; when set, clients must present a certificate it signed (mutual TLS)."""
    auth_token_sha256: str = ""
    """Comma-separated SHA-256 hex digests of accepted bearer tokens.

    Each is a `caller` named `sha256:` + its first 12 hex digits (see auth_tokens).
    Auth is off when this and auth_tokens are both empty. Only digests are configured,
    so no token appears in configuration or logs.
    """
    auth_tokens: str = ""
    """Named bearer tokens with roles, as a JSON list (empty: none); adds to auth_token_sha256.

    `[{"name": "checkout", "sha256": "<hex digest>", "role": "caller"}, ...]`. The name is
    the token's tenant and the labeller its labels record (1-64 of `A-Za-z0-9._:@-`);
    the role is `caller` (its own tenant only), `labeller` (also writes labels into
    other tenants, as itself) or `admin` (every tenant). Kept as text and parsed at
    start-up so that an error never echoes a value (a pasted token).
    """
    auth_open_health: bool = True
    """Leave health checks and reflection open to callers without a token."""
    max_in_flight_per_token: int = Field(0, ge=0)
    """Most calls one token may have in flight; 0 means no limit."""
    max_bytes_in_flight: int = Field(512 * 1024 * 1024, ge=0)
    """Most bytes of scoring requests (Score, RunSuite, ValidateSuite) the server holds
    at once, counted as they arrive and released when each call ends; a request past it
    is RESOURCE_EXHAUSTED at once, before it is parsed or scored. 0 means no limit."""
    max_bytes_in_flight_per_tenant: int = Field(256 * 1024 * 1024, ge=0)
    """Most bytes of scoring requests one tenant (one connection when auth is off) holds
    at once, as `max_bytes_in_flight`; 0 means no limit."""
    imports: list[str] = Field(default_factory=list)
    """Python modules of server-side custom checks, imported at start-up.

    The only way Python code enters the server: nothing arriving over the wire runs.
    """


class JudgeSettings(BaseModel):
    """The judge: providers, calls, embeddings, prices, budgets and leases, agreement."""

    judge_model: str = ""
    """Default judge as `backend:model` (`openai:gpt-4o-mini`); `auto` picks by credentials."""
    openai_base_url: str | None = None
    """OpenAI-compatible endpoint (vLLM, Ollama, ...); falls back to OPENAI_BASE_URL."""
    openai_api_key: SecretStr | None = None
    """Falls back to OPENAI_API_KEY. Never logged."""
    anthropic_base_url: str | None = None
    """Falls back to ANTHROPIC_BASE_URL."""
    anthropic_api_key: SecretStr | None = None
    """Falls back to ANTHROPIC_API_KEY. Never logged."""
    judge_temperature: float = Field(0.0, ge=0.0, le=2.0)
    """Sampling temperature of every judge call; part of the verdict cache key."""
    judge_timeout_s: float = Field(60.0, gt=0)
    """Seconds one judge HTTP attempt may take; the request deadline bounds it further."""
    judge_max_retries: int = Field(4, ge=0, le=20)
    """Retries of a judge call after a 429, a 5xx, a timeout or a dropped connection."""
    judge_retry_base_s: float = Field(0.5, ge=0)
    """First retry backoff in seconds; doubles per retry, with jitter."""
    judge_retry_max_s: float = Field(30.0, ge=0)
    """Longest wait before one retry (backoff or Retry-After); a longer Retry-After gives up."""
    judge_concurrency: int = Field(32, ge=1, le=4096)
    """Judge calls in flight at once, per backend (OpenAI-compatible, Anthropic). Calls
    waiting for one wait in a queue per tenant (per connection when auth is off), taken in
    turn (weighted round robin, `tenant_weights`): a tenant's next call waits behind its
    own, and another tenant's takes the next free slot. No tenant is capped: one alone
    may hold every slot."""
    max_judge_samples: int = Field(16, ge=1, le=16)
    """Most `samples:` one judge-backed check may ask for (each sample is a judge call);
    a request asking more is refused RESOURCE_EXHAUSTED naming this setting."""
    max_bootstrap_resamples: int = Field(10_000, ge=1, le=1_000_000)
    """Most bootstrap resamples an Agreement or Calibrate request may ask for (the
    confidence interval of Cohen's kappa)."""
    max_agreement_cases: int = Field(100_000, ge=1)
    """Most cases one Agreement or Calibrate request pairs with human labels: those it
    sends, or those of the recorded run it names (a run holding more is refused before
    any is read). A case costs about ten bytes of memory per judge-backed check and a
    few microseconds, on the event loop in slices that let other calls through."""
    max_calibration_thresholds: int = Field(1_000, ge=1)
    """Most candidate thresholds one Calibrate request tries: those it sends, or, when it
    sends none, the distinct values the judge gave. Each is one point of the answer; the
    sweep sorts the values once, so it costs O((cases + thresholds) log cases)."""
    agreement_kappa_floor: float = Field(0.6, ge=-1.0, le=1.0)
    """The lowest acceptable Cohen's kappa between a judge check and human labels: exported
    as `scorewire_judge_agreement_kappa_floor`, which the ScorewireJudgeAgreementLow alert
    compares the latest kappa with."""
    judge_watch: JudgeWatchSettings = Field(default_factory=JudgeWatchSettings)
    """Judge drift and calls per output (`scorewire.core.judge_watch`), set per field."""
    embeddings_base_url: str | None = None
    """OpenAI-compatible endpoint serving `/embeddings`; None means the SDK's default
    (OPENAI_BASE_URL, else OpenAI)."""
    embeddings_model: str = ""
    """Embedding model name (`text-embedding-3-small`); empty turns embeddings off, and
    `similarity` then scores an error."""
    embeddings_api_key: SecretStr | None = None
    """Falls back to OPENAI_API_KEY; a local endpoint (base URL set) needs none. Never logged."""
    judge_prices: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Price overrides, model name -> [input, output] USD per 1M tokens (JSON in the env).
    Entries here win over the built-in table (`scorewire.judge.pricing`); a model in
    neither is unpriced: its scores are flagged, and its cost is never guessed.
    """
    judge_fallback_price: tuple[float, float] | None = None
    """[input, output] USD per 1M tokens for models in neither price table (JSON in the env).
    Unset (the default), such models are unpriced, and a budgeted call to one is refused
    with an error score naming the model, unless `judge_allow_unpriced` is set.
    """
    judge_allow_unpriced: bool = False
    """Let budgeted calls to unpriced models run anyway, their cost uncounted by every budget.
    Off by default: a call a budget cannot price is a call no budget limits.
    """
    judge_budget_usd: float | None = Field(None, ge=0)
    """Server-wide judge spend limit per period in USD; None for no limit. Shared by every
    worker and replica through Redis when there is one (budget_url or a Redis cache_url),
    else per process."""
    judge_budget_period_s: int = Field(86_400, ge=1)
    """Length of the server-wide budget period in seconds (windows aligned to the epoch)."""
    judge_budget_per_token_usd: float | None = Field(None, ge=0)
    """Judge dollars each bearer token may spend per budget period; unset means no limit."""
    budget_url: SecretStr | None = None
    """Redis of the shared budgets and single-flight leases (`redis://user:pass@host:port/db`
    or `rediss://`); unset: the Redis of cache_url, if it is one. Never logged."""
    budget_fail_open: bool = False
    """When the budget Redis does not answer, let judge calls run metered by this process
    alone (N replicas may spend N times a limit) instead of refusing them with
    BUDGET_UNAVAILABLE (the default: never an unmetered call)."""
    budget_timeout_s: float = Field(0.5, gt=0)
    """Seconds one shared-budget or lease operation may take before Redis counts as down."""
    budget_reservation_ttl_s: float = Field(900.0, gt=0)
    """Seconds a shared-budget hold lives unsettled: what a replica that died mid-call
    keeps held. Keep it above the longest judge call (timeout × retries)."""
    budget_poll_s: float = Field(0.05, gt=0)
    """Seconds between polls of a call waiting for shared holds to settle, or for another
    replica's verdict (doubling to 0.5 s for budgets; a settle of a hold of the same
    process wakes the waiting call at once)."""
    budget_run_ttl_s: int = Field(7 * 86_400, ge=60)
    """Seconds a run's shared budget (calls sent with `scorewire-run-id` metadata) is kept
    in Redis after its last call."""
    single_flight_lease_s: float = Field(30.0, gt=0)
    """Seconds a replica's lease on a verdict key lasts (a dead holder's lapses then)."""
    single_flight_wait_s: float = Field(30.0, ge=0)
    """Seconds a replica waits for the verdict another replica holds the lease on before
    calling anyway; 0 turns single flight across replicas off."""
    redis_tls_ca: str | None = None
    """PEM CA bundle that `rediss://` servers' certificates are checked against; unset:
    the system's CAs."""
    replicas: int = Field(1, ge=1)
    """How many replicas the deployment runs (informational): above 1 with the label or
    run store on a SQLite file of its own (no `database_url`), the server warns at start-up."""

    gemini_base_url: str | None = None
    """Gemini's OpenAI-compatible endpoint for `gemini:` providers (else GEMINI_BASE_URL)."""
    gemini_api_key: SecretStr | None = None
    """Falls back to GEMINI_API_KEY. Never logged."""

    tenants_trust_each_other: bool = False
    """Tell callers when a verdict came from the cache although another tenant paid for it.
    Off by default: the verdict cache is shared by every tenant, but a hit on a verdict
    another tenant's call produced is reported as a fresh call (not `cached`, its cost
    as the call would have cost, charged to this caller's budgets), so that no caller
    learns what another one scored; the saving shows in metrics only.
    """

    @field_validator("judge_prices")
    @classmethod
    def _prices_are_finite_and_not_negative(
        cls, value: dict[str, tuple[float, float]]
    ) -> dict[str, tuple[float, float]]:
        for name, price in value.items():
            _check_price(price, f"the price of {name!r}")
        return value

    @field_validator("judge_fallback_price")
    @classmethod
    def _fallback_is_finite_and_not_negative(
        cls, value: tuple[float, float] | None
    ) -> tuple[float, float] | None:
        if value is not None:
            _check_price(value, "the fallback price")
        return value


class CacheSettings(BaseModel):
    """The verdict (and generation) cache: where it lives, how big, how long, how fast."""

    cache_url: str = "memory://"
    """Verdict cache: `memory://` (per process) or `redis://[user:password@]host:port/db`
    (`rediss://` for TLS), shared."""
    cache_memory_bytes: int = Field(64 * 1024 * 1024, ge=0)
    """Most bytes of verdicts (and generated outputs) a `memory://` cache keeps per process,
    counting keys, answers and 240 bytes per entry; past it the least recently used entries
    of the tenant holding the most bytes go. 0 keeps none."""
    cache_tenant_max_bytes: int | None = Field(None, ge=0)
    """Most bytes of verdicts (and generated outputs) one tenant's calls may hold in a Redis
    cache, counting keys and answers; past it that tenant's least recently used entries
    go, so a tenant flooding the cache evicts its own entries, not those other tenants
    paid for. Unset: Redis's `maxmemory-policy` decides, across tenants (set it to about
    the Redis `maxmemory` over the number of tenants). Entries without a tenant (no
    authentication) are not counted. A `memory://` cache shares `cache_memory_bytes`
    between tenants instead."""
    cache_tenant_evictions_per_store: int = Field(64, ge=1)
    """Most entries one store takes off a tenant's books to bring it back within
    `cache_tenant_max_bytes`; the rest go at its next stores. The eviction runs in one Redis
    script, which holds Redis for every caller and replica while it runs: this bounds it
    (after the bound was lowered a lot, say)."""
    cache_ttl_s: int = Field(30 * 24 * 3600, ge=0)
    """Seconds a cached verdict lives; 0 keeps it until evicted."""
    cache_timeout_s: float = Field(0.25, gt=0)
    """Seconds one Redis cache operation may take before the cache is bypassed."""
    cache_backoff_s: float = Field(2.0, ge=0)
    """After a Redis failure, seconds the cache is bypassed before Redis is tried again."""
    cache_pool_size: int = Field(64, ge=1)
    """Redis connections per process; callers beyond it wait up to `cache_timeout_s`."""


class GenerationSettings(BaseModel):
    """Generation on the server: checkllm suites sent without outputs."""

    generation_enabled: bool = False
    """Let RunSuite generate a checkllm suite's outputs with the server's own provider
    credentials (the judge's keys and base URLs). Off by default: a request without
    outputs is then FAILED_PRECONDITION naming this setting."""
    generation_max_calls_per_request: int = Field(1000, ge=1)
    """Most provider calls one RunSuite may need (combinations without a recorded output);
    more is RESOURCE_EXHAUSTED before any call."""
    generation_max_concurrency: int = Field(128, ge=1)
    """Most cases one RunSuite generates (and scores) at once, in place of
    `max_concurrency`; a suite's own `concurrency` (16 by default) is the usual limit,
    and the provider account's window the server-wide one."""
    generation_provider_concurrency: int = Field(8, ge=1)
    """Calls one provider account (backend, base URL, key) is sent at once at first, by
    every request together; the window then grows while the provider answers and halves
    when it answers 429 (`scorewire.generation.accounts`)."""
    generation_provider_max_concurrency: int = Field(128, ge=1)
    """The most calls one provider account is sent at once, however well it answers."""
    generation_provider_tenant_share: float = Field(1.0, gt=0, le=1)
    """The most of a provider account's window one tenant's generations hold at once, as
    a share of it (at least one call; 1: all). A call holds its place while it runs, so
    uncapped, a tenant whose calls hang can fill the window; a cap keeps the rest free
    for others, and costs a lone tenant that much of it (`docs/suites.md`)."""
    generation_budget_per_request_usd: float = Field(1.0, ge=0)
    """Most US dollars one RunSuite may spend generating outputs (the request's
    `generation_budget_usd` may lower it); once spent, the remaining outputs are
    BUDGET_EXHAUSTED error scores."""
    generation_budget_usd: float | None = Field(None, ge=0)
    """Server-wide generation spend limit per period in USD, shared in Redis by every
    replica when the judge budgets are (a Redis cache or budget URL), else per process;
    None for no limit beyond the per-request one."""
    generation_budget_period_s: int = Field(86_400, ge=1)
    """Length of the server-wide generation budget period in seconds."""
    generation_timeout_s: float = Field(60.0, gt=0)
    """Seconds one provider call may take (the request's deadline bounds it further)."""
    generation_max_retries: int = Field(2, ge=0, le=10)
    """Retries of a provider call after a 429, a 5xx or a dropped connection (the SDKs'
    backoff)."""
    generation_max_output_chars: int = Field(32_768, ge=64)
    """Longest generated output a RunSuite result carries back (`generated_output`); longer
    ones are cut, marked with `…` (the checks scored the whole output)."""
    generation_cache_enabled: bool = True
    """Answer identical generations (provider, prompt, sampling parameters) from the
    generation cache, which lives where the verdict cache does (`cache_url`, shared through
    Redis); a suite's `settings.cache: false` turns it off for that run."""


class StoreSettings(BaseModel):
    """The state directory and the label and run stores (SQLite there, or PostgreSQL)."""

    state_dir: str = ""
    """Directory of the server's own files (the SQLite label and run stores), created if absent.

    Empty: `$XDG_STATE_HOME/scorewire`, else `~/.local/state/scorewire`. The image sets
    `/var/lib/scorewire`, a volume. Resolved once by `state_path()`.
    """

    def state_path(self) -> Path:
        """The state directory as an absolute path (a relative setting is under the cwd)."""
        if self.state_dir:
            return Path(self.state_dir).expanduser().absolute()
        # The XDG base-directory spec ignores a relative XDG_STATE_HOME.
        xdg = os.environ.get("XDG_STATE_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "state"
        return base / "scorewire"

    database_url: SecretStr | None = None
    """`postgresql://user:password@host:port/db`: the database replicas share, for the label
    and run stores (`labels_url`, `runs_url` override it); unset: SQLite files. Never logged."""
    store_timeout_s: float = Field(2.0, gt=0)
    """Seconds one call to a label, run or job store or the observation queue (PostgreSQL or
    Redis) may take, waiting for a connection included, before the store counts as not answering:
    the request fails UNAVAILABLE naming the store (a `human` check scores
    LABELS_UNAVAILABLE), however the database stopped answering (down, frozen, its host
    gone). The run store's maintenance (heartbeat, stale runs, retention), which no
    request waits on, gets the longer of this and runs_heartbeat_s."""
    labels_path: str = Field("labels.db", min_length=1)
    """SQLite file of the label store, used when `labels_url` is not set (created if
    absent); a relative path is under the state directory (`state_dir`), not the cwd."""

    def labels_file(self) -> Path:
        """The SQLite label store's file: `labels_path` resolved against `state_path()`."""
        return self.state_path() / Path(self.labels_path).expanduser()

    labels_url: SecretStr | None = None
    """`postgresql://user:password@host:port/db`: keep labels in PostgreSQL, shared by replicas.

    A SecretStr because the URL may carry a password; it is never logged.
    """
    runs_record: bool = False
    """Record RunSuite and ScoreStream calls that do not say (`record` unset) in the run store."""
    runs_path: str = Field("runs.db", min_length=1)
    """SQLite file of the run store, used when `runs_url` is not set (created if absent);
    a relative path is under the state directory (`state_dir`)."""

    def runs_file(self) -> Path:
        """The SQLite run store's file: `runs_path` resolved against `state_path()`."""
        return self.state_path() / Path(self.runs_path).expanduser()

    runs_url: SecretStr | None = None
    """`postgresql://user:password@host:port/db`: keep runs in PostgreSQL, shared by replicas
    (the label store's database may be used). Never logged."""
    runs_max_age_s: int = Field(30 * 86_400, ge=0)
    """Finished runs older than this many seconds are deleted by the server; 0 keeps them."""
    runs_max_runs: int = Field(10_000, ge=0)
    """The server keeps at most this many finished runs (the newest); 0 means no limit."""
    runs_queue_chunks: int = Field(64, ge=1)
    """Result chunks (up to 256 results each) waiting to be written before a recording
    call waits for the store (backpressure: results are never dropped)."""
    runs_heartbeat_s: float = Field(10.0, gt=0)
    """Seconds between a server's run-store heartbeats, and its retention rounds; a
    server silent for three periods has its running runs marked incomplete."""
    max_run_labels: int = Field(32, ge=0)
    """Most labels (`git_sha`, `model`, ...) one recorded run may carry."""
    max_run_label_chars: int = Field(256, ge=1)
    """Longest run name, label key or label value, in characters."""

    @field_validator("database_url", "labels_url", "runs_url")
    @classmethod
    def _is_postgresql(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None  # an empty value (`${VAR:-}` in a deploy file) means unset
        scheme = value.get_secret_value().split("://", 1)[0].lower()
        if scheme not in ("postgresql", "postgres"):
            raise ValueError("must be a postgresql:// URL (SQLite files are set by their _path)")
        return value

    @model_validator(mode="before")
    @classmethod
    def _stores_default_to_the_database(cls, data: Any) -> Any:
        """`labels_url` and `runs_url` left unset (or empty) take `database_url`."""
        raw = {k: v.get_secret_value() if isinstance(v, SecretStr) else v for k, v in data.items()}
        shared = str(raw.get("database_url") or "")
        if not shared.lower().startswith(("postgres:", "postgresql:")):
            return data  # unset, or refused once by database_url's own check
        return {**data, **{k: shared for k in ("labels_url", "runs_url") if not raw.get(k)}}


class MetricsSettings(BaseModel):
    """The Prometheus endpoint."""

    metrics_port: int = Field(9464, ge=0, le=65535)
    """Port of the Prometheus /metrics HTTP endpoint; 0 picks a free one."""
    metrics_enabled: bool = True
    """Whether to serve and record metrics at all."""


class ViewerSettings(StoreSettings):
    """The results viewer's pages (its results directory is under the state directory)."""

    viewer_port: int | None = Field(None, ge=0, le=65535)
    """Port of the results viewer's HTTP pages; unset (the default) serves no viewer,
    0 picks a free one. Behind the bearer tokens when auth is on."""
    viewer_host: str = "127.0.0.1"
    """Address the viewer binds to: loopback unless set (it shows every output scored)."""
    viewer_results_dir: str | None = Field(None, min_length=1)
    """Directory of `scorewire run --output` results files the viewer shows (recursively)
    instead of the server's recorded runs; a relative path is under the state directory
    (`state_dir`). Unset (the default): the served viewer shows the run store's runs."""
    viewer_max_cases: int = Field(1_000, ge=1)
    """Most cases one run page lists; the filter narrows which."""
    viewer_session_ttl_s: int = Field(12 * 3600, ge=60)
    """Seconds a viewer sign-in (a bearer token exchanged for a cookie) lasts."""
    viewer_request_timeout_s: float = Field(30.0, gt=0)
    """Seconds a viewer connection may sit idle mid-request (or in the TLS handshake)
    before it is closed: a silent client does not hold a thread. Also the longest one
    run-store read of a page may take (then the page is a 503)."""

    def viewer_results_path(self) -> Path:
        """`viewer_results_dir` (`results` when unset) resolved against `state_path()`."""
        return self.state_path() / Path(self.viewer_results_dir or "results").expanduser()


class LoggingSettings(BaseModel):
    """What the server logs."""

    log_level: str = "INFO"
    """Python logging level name (DEBUG, INFO, WARNING, ERROR, CRITICAL)."""

    @field_validator("log_level")
    @classmethod
    def _log_level_is_a_level(cls, value: str) -> str:
        name = value.strip().upper()
        if name not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError("must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return name


# pydantic collects fields from the last base to the first (the reversed MRO): the
# parts are listed last to first so that `model_fields` keeps the order of this file.
class Settings(
    JobSettings,
    LoggingSettings,
    ObserveSettings,
    ViewerSettings,
    MetricsSettings,
    StoreSettings,
    GenerationSettings,
    CacheSettings,
    JudgeSettings,
    SecuritySettings,
    RequestCostSettings,
    ScoringSettings,
    TransportSettings,
    BaseSettings,
):
    """Server, engine, judge, cache and metrics configuration."""

    model_config = SettingsConfigDict(
        env_prefix="SCOREWIRE_",
        extra="ignore",
        frozen=True,
        env_nested_delimiter="__",
        allow_inf_nan=False,  # a timeout or budget of nan/inf is a start-up error
    )


def _check_price(price: tuple[float, float], what: str) -> None:
    # A negative price would make calls refund the budget they are held against.
    if not all(math.isfinite(p) and p >= 0 for p in price):
        raise ValueError(f"{what} must be two finite numbers >= 0 (USD per 1M tokens)")
