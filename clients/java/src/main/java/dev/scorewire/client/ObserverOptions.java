package dev.scorewire.client;

import java.time.Duration;
import java.util.Objects;

/**
 * How an {@link Observer} buffers, batches and retries: {@code
 * ObserverOptions.defaults().withBufferSize(50_000)}. Immutable; each {@code with} returns a
 * copy.
 */
public final class ObserverOptions {
  private final int bufferSize;
  private final int batchSize;
  private final Duration flushInterval;
  private final Duration callDeadline;
  private final int maxAttempts;
  private final Duration initialBackoff;
  private final Duration maxBackoff;

  private ObserverOptions(
      int bufferSize,
      int batchSize,
      Duration flushInterval,
      Duration callDeadline,
      int maxAttempts,
      Duration initialBackoff,
      Duration maxBackoff) {
    this.bufferSize = bufferSize;
    this.batchSize = batchSize;
    this.flushInterval = flushInterval;
    this.callDeadline = callDeadline;
    this.maxAttempts = maxAttempts;
    this.initialBackoff = initialBackoff;
    this.maxBackoff = maxBackoff;
  }

  /**
   * 10,000 buffered, batches of 500 or every second, 5 s per call, 5 attempts, backoff from
   * 100 ms doubling up to 5 s.
   */
  public static ObserverOptions defaults() {
    return new ObserverOptions(
        10_000, 500, Duration.ofSeconds(1), Duration.ofSeconds(5), 5, Duration.ofMillis(100), Duration.ofSeconds(5));
  }

  /** The most observations held, waiting or being sent (at least 1); past it observe drops. */
  public ObserverOptions withBufferSize(int bufferSize) {
    positive(bufferSize, "bufferSize");
    return new ObserverOptions(
        bufferSize, batchSize, flushInterval, callDeadline, maxAttempts, initialBackoff, maxBackoff);
  }

  /** The most observations per Observe call, 1 to 1,000; a full batch is sent at once. */
  public ObserverOptions withBatchSize(int batchSize) {
    if (batchSize < 1 || batchSize > 1000) {
      throw new IllegalArgumentException("batchSize must be 1 to 1000, not " + batchSize);
    }
    return new ObserverOptions(
        bufferSize, batchSize, flushInterval, callDeadline, maxAttempts, initialBackoff, maxBackoff);
  }

  /** The longest an observation waits for its batch to fill. */
  public ObserverOptions withFlushInterval(Duration flushInterval) {
    return new ObserverOptions(
        bufferSize, batchSize, positive(flushInterval, "flushInterval"), callDeadline, maxAttempts,
        initialBackoff, maxBackoff);
  }

  /** The deadline of each Observe call. */
  public ObserverOptions withCallDeadline(Duration callDeadline) {
    return new ObserverOptions(
        bufferSize, batchSize, flushInterval, positive(callDeadline, "callDeadline"), maxAttempts,
        initialBackoff, maxBackoff);
  }

  /**
   * How many times a batch is sent (at least 1) on UNAVAILABLE, RESOURCE_EXHAUSTED or
   * DEADLINE_EXCEEDED before it is dropped; each wait is random up to {@code initialBackoff},
   * doubled per retry up to {@code maxBackoff}.
   */
  public ObserverOptions withRetries(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
    positive(maxAttempts, "maxAttempts");
    return new ObserverOptions(
        bufferSize, batchSize, flushInterval, callDeadline, maxAttempts,
        positive(initialBackoff, "initialBackoff"), positive(maxBackoff, "maxBackoff"));
  }

  /** The most observations held. */
  public int bufferSize() {
    return bufferSize;
  }

  /** The most observations per call. */
  public int batchSize() {
    return batchSize;
  }

  /** The longest wait for a batch to fill. */
  public Duration flushInterval() {
    return flushInterval;
  }

  /** Each call's deadline. */
  public Duration callDeadline() {
    return callDeadline;
  }

  /** Attempts of one batch, the first included. */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** The bound of the first retry's wait. */
  public Duration initialBackoff() {
    return initialBackoff;
  }

  /** The largest bound of a retry's wait. */
  public Duration maxBackoff() {
    return maxBackoff;
  }

  private static void positive(int value, String name) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " must be at least 1, not " + value);
    }
  }

  private static Duration positive(Duration value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, not " + value);
    }
    return value;
  }
}
