import * as grpc from "@grpc/grpc-js";

import { fieldViolationsOf } from "./errors";
import {
  type DeepPartial,
  Observation,
  ObservationStatus,
  ObserveRequest,
  type ObserveResponse,
  ObserveServiceClient,
} from "./gen/scorewire/v1/observe";

/**
 * Why an Observer dropped an observation: the buffer was full; it could not be converted,
 * or its trace or span id is not 32 or 16 lowercase hex digits; the server refused it
 * with a code a retry cannot change (INVALID_ARGUMENT, naming it or its whole batch;
 * FAILED_PRECONDITION, ...);
 * every attempt failed with a retryable code; observed after close(), or unsent at its
 * deadline.
 */
export type DropReason = "buffer_full" | "invalid" | "rejected" | "retries_exhausted" | "closed";

/** The drop reasons, in the order stats() lists them. */
export const DROP_REASONS: readonly DropReason[] = ["buffer_full", "invalid", "rejected", "retries_exhausted", "closed"];

/** The codes a batch is sent again on. */
const RETRYABLE = new Set<number>([
  grpc.status.UNAVAILABLE,
  grpc.status.RESOURCE_EXHAUSTED,
  grpc.status.DEADLINE_EXCEEDED,
]);

/** How an Observer buffers, batches and retries; every field has a default. */
export interface ObserverOptions {
  /** Most observations held, waiting or being sent (default 10,000); past it observe() drops. */
  bufferSize?: number;
  /** Most observations per Observe call, 1 to 1,000 (default 500); a full batch is sent at once. */
  batchSize?: number;
  /** Longest an observation waits for its batch to fill, in ms (default 1,000). */
  flushIntervalMs?: number;
  /** Deadline of each Observe call, in ms (default 5,000). */
  callTimeoutMs?: number;
  /** How many times a batch is sent before it is dropped (default 5). */
  maxAttempts?: number;
  /** Longest wait before the first retry, in ms (default 100), doubled per retry... */
  initialBackoffMs?: number;
  /** ...up to this (default 5,000); each wait is random up to the bound (full jitter). */
  maxBackoffMs?: number;
}

/** What an Observer did with the observations it was given. */
export interface ObserverStats {
  /** Observations taken into the buffer. */
  accepted: number;
  /** Acknowledged by the server as QUEUED. */
  queued: number;
  /** Acknowledged as DUPLICATE (an observation with the same id was queued before). */
  duplicate: number;
  /** Observations dropped, by reason. */
  dropped: Record<DropReason, number>;
  /** Waiting or being sent now. */
  buffered: number;
  /** Observe calls sent again after a retryable error. */
  retries: number;
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;

/**
 * Sends observations of production traffic to ObserveService in the background:
 * observe() returns at once and never throws; batches go out when full or every
 * flushIntervalMs, are retried on UNAVAILABLE, RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED
 * with backoff, and what cannot be sent is dropped and counted (stats()). Its timer does
 * not keep the process alive. Close it before the client.
 */
export class Observer {
  private readonly stub: ObserveServiceClient;
  private readonly opts: Required<ObserverOptions>;
  private buf: Observation[] = [];
  private inFlight = 0;
  private accepted = 0;
  private resolved = 0;
  private closed = false;
  private aborted = false;
  private readonly counts = { queued: 0, duplicate: 0, retries: 0 };
  private readonly dropped: Record<DropReason, number> = {
    buffer_full: 0,
    invalid: 0,
    rejected: 0,
    retries_exhausted: 0,
    closed: 0,
  };
  private readonly timer: NodeJS.Timeout;
  private sending: Promise<void> | null = null;
  private scheduled = false;
  private call: grpc.ClientUnaryCall | null = null;
  private backoff: { timer: NodeJS.Timeout; wake: () => void } | null = null;
  private waiters: { target: number; resolve: (done: boolean) => void }[] = [];

  /** An Observer over `channel` (ScorewireClient.observer() passes its own). */
  constructor(channel: ReturnType<grpc.Client["getChannel"]>, options: ObserverOptions = {}) {
    this.stub = new ObserveServiceClient("unused", grpc.credentials.createInsecure(), { channelOverride: channel });
    this.opts = {
      bufferSize: options.bufferSize ?? 10_000,
      batchSize: Math.min(Math.max(options.batchSize ?? 500, 1), 1000),
      flushIntervalMs: options.flushIntervalMs ?? 1_000,
      callTimeoutMs: options.callTimeoutMs ?? 5_000,
      maxAttempts: Math.max(options.maxAttempts ?? 5, 1),
      initialBackoffMs: options.initialBackoffMs ?? 100,
      maxBackoffMs: options.maxBackoffMs ?? 5_000,
    };
    this.timer = setInterval(() => this.pump(), this.opts.flushIntervalMs);
    this.timer.unref();
  }

  /**
   * Buffers one observation to be sent; true if taken, false if dropped (and counted).
   * Never throws. An unset `observedAt` is now.
   */
  observe(observation: DeepPartial<Observation>): boolean {
    let obs: Observation;
    try {
      obs = Observation.fromPartial(observation);
      const traceId = obs.trace?.traceId ?? "";
      const spanId = obs.trace?.spanId ?? "";
      if ((traceId !== "" && !TRACE_ID.test(traceId)) || (spanId !== "" && !SPAN_ID.test(spanId))) {
        return this.drop("invalid");
      }
      obs.observedAt ??= new Date();
    } catch {
      return this.drop("invalid");
    }
    if (this.closed) return this.drop("closed");
    if (this.buf.length + this.inFlight >= this.opts.bufferSize) return this.drop("buffer_full");
    this.buf.push(obs);
    this.accepted += 1;
    if (this.buf.length >= this.opts.batchSize && !this.scheduled) {
      // Sent on the next turn of the event loop, never inside the caller's call.
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    }
    return true;
  }

  /** The counters now. */
  stats(): ObserverStats {
    return {
      accepted: this.accepted,
      ...this.counts,
      dropped: { ...this.dropped },
      buffered: this.buf.length + this.inFlight,
    };
  }

  /**
   * Sends everything observed so far; resolves true once each is acknowledged or dropped,
   * false if `timeoutMs` passed first (they stay buffered and are still sent). Never rejects.
   */
  flush(timeoutMs = 5_000): Promise<boolean> {
    const target = this.accepted;
    this.pump();
    return this.until(target, timeoutMs);
  }

  /**
   * Stops taking observations and sends what is buffered for up to `timeoutMs`, then drops
   * what is left (reason `closed`); resolves true if nothing had to be dropped. Never rejects.
   */
  async close(timeoutMs = 5_000): Promise<boolean> {
    if (this.closed) return !this.aborted;
    this.closed = true;
    clearInterval(this.timer);
    this.pump();
    if (await this.until(this.accepted, timeoutMs)) return true;
    this.aborted = true;
    this.call?.cancel();
    this.backoff?.wake();
    await this.sending;
    const left = this.buf.length;
    this.buf = [];
    this.inFlight += left;
    this.resolve(null, "closed", left);
    return false;
  }

  private drop(reason: DropReason): false {
    this.dropped[reason] += 1;
    return false;
  }

  private until(target: number, timeoutMs: number): Promise<boolean> {
    if (this.resolved >= target) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        target,
        resolve: (done: boolean) => {
          clearTimeout(timer);
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve(done);
        },
      };
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Starts the sender unless it is running; it sends batches until the buffer is empty. */
  private pump(): void {
    if (this.sending !== null || this.buf.length === 0 || this.aborted) return;
    this.sending = (async () => {
      while (this.buf.length > 0 && !this.aborted) {
        const batch = this.buf.slice(0, this.opts.batchSize);
        this.buf = this.buf.slice(batch.length);
        this.inFlight += batch.length;
        await this.send(batch);
      }
    })().finally(() => {
      this.sending = null;
    });
  }

  /**
   * One batch, with retries; then counted. When INVALID_ARGUMENT names the bad observations
   * of the batch, only those are dropped and the rest sent again, once.
   */
  private async send(batch: Observation[]): Promise<void> {
    let request = ObserveRequest.fromPartial({ observations: batch });
    let backoff = this.opts.initialBackoffMs;
    let split = false;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(request);
      if (!(outcome instanceof Error)) return this.resolve(outcome, null, batch.length);
      if (this.aborted) return this.resolve(null, "closed", batch.length);
      const code = (outcome as Partial<grpc.ServiceError>).code ?? grpc.status.UNKNOWN;
      if (!RETRYABLE.has(code)) {
        const bad = split ? null : refused(outcome as grpc.ServiceError, batch.length);
        if (bad !== null && bad.size > 0 && bad.size < batch.length) {
          split = true;
          this.resolve(null, "rejected", bad.size);
          batch = batch.filter((_, i) => !bad.has(i));
          request = ObserveRequest.fromPartial({ observations: batch });
          continue;
        }
        return this.resolve(null, "rejected", batch.length);
      }
      if (attempt >= this.opts.maxAttempts) return this.resolve(null, "retries_exhausted", batch.length);
      this.counts.retries += 1;
      await new Promise<void>((wake) => {
        const timer = setTimeout(wake, Math.random() * backoff);
        timer.unref(); // a retry pending does not keep the process alive on its own
        this.backoff = { timer, wake };
      });
      clearTimeout(this.backoff?.timer);
      this.backoff = null;
      if (this.aborted) return this.resolve(null, "closed", batch.length);
      backoff = Math.min(2 * backoff, this.opts.maxBackoffMs);
    }
  }

  private attempt(request: ObserveRequest): Promise<ObserveResponse | Error> {
    return new Promise((resolve) => {
      this.call = this.stub.observe(
        request,
        new grpc.Metadata(),
        { deadline: Date.now() + this.opts.callTimeoutMs },
        (err, response) => {
          this.call = null;
          resolve(err ?? response);
        },
      );
    });
  }

  private resolve(response: ObserveResponse | null, reason: DropReason | null, n: number): void {
    if (response !== null) {
      for (const ack of response.acks) {
        if (ack.status === ObservationStatus.OBSERVATION_STATUS_DUPLICATE) this.counts.duplicate += 1;
        else this.counts.queued += 1;
      }
    } else if (reason !== null) {
      this.dropped[reason] += n;
    }
    this.inFlight -= n;
    this.resolved += n;
    for (const w of [...this.waiters]) if (this.resolved >= w.target) w.resolve(true);
  }
}

const OBSERVATION_FIELD = /^observations\[(\d+)\]/;

/**
 * The positions of the observations an INVALID_ARGUMENT names
 * (`observations[3].metadata.route`), or null unless every violation names one below n.
 */
function refused(err: grpc.ServiceError, n: number): Set<number> | null {
  if (err.code !== grpc.status.INVALID_ARGUMENT || err.metadata === undefined) return null;
  const bad = new Set<number>();
  for (const v of fieldViolationsOf(err.metadata)) {
    const match = OBSERVATION_FIELD.exec(v.field);
    if (match === null || Number(match[1]) >= n) return null;
    bad.add(Number(match[1]));
  }
  return bad;
}
