package dev.scorewire.client;

import com.google.protobuf.Timestamp;
import dev.scorewire.v1.Observation;
import dev.scorewire.v1.ObservationAck;
import dev.scorewire.v1.ObservationStatus;
import dev.scorewire.v1.ObserveRequest;
import dev.scorewire.v1.ObserveResponse;
import dev.scorewire.v1.ObserveServiceGrpc;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Sends observations of production traffic to ObserveService from a background thread:
 * {@link #observe} returns at once and never throws. Batches go out when full or every flush
 * interval, are retried on UNAVAILABLE, RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED with backoff,
 * and what cannot be sent is dropped and counted ({@link #stats}). Thread-safe; its thread is a
 * daemon. Close it before the client ({@link ScorewireClient#observer}).
 */
public final class Observer implements AutoCloseable {
  /** Why an observation was dropped instead of queued by the server. */
  public enum DropReason {
    /** The buffer held bufferSize observations (the server slow or down). */
    BUFFER_FULL,
    /** Null, or a trace or span id that is not 32 or 16 lowercase hex digits. */
    INVALID,
    /**
     * The server refused it with a code a retry cannot change (INVALID_ARGUMENT, naming it or its
     * whole batch; FAILED_PRECONDITION, ...).
     */
    REJECTED,
    /** Every attempt failed with UNAVAILABLE, RESOURCE_EXHAUSTED or DEADLINE_EXCEEDED. */
    RETRIES_EXHAUSTED,
    /** Observed after close, or still unsent when close's deadline passed. */
    CLOSED
  }

  /**
   * What an Observer did with the observations it was given.
   *
   * @param accepted observations taken into the buffer
   * @param queued acknowledged by the server as QUEUED
   * @param duplicate acknowledged as DUPLICATE (an observation with the same id was queued before)
   * @param dropped observations dropped, by reason (every reason present)
   * @param buffered waiting or being sent now
   * @param retries Observe calls sent again after a retryable error
   */
  public record Stats(
      long accepted, long queued, long duplicate, Map<DropReason, Long> dropped, int buffered, long retries) {}

  private static final Set<Status.Code> RETRYABLE =
      Set.of(Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED, Status.Code.DEADLINE_EXCEEDED);
  private static final Pattern TRACE_ID = Pattern.compile("[0-9a-f]{32}");
  private static final Pattern SPAN_ID = Pattern.compile("[0-9a-f]{16}");
  private static final Pattern OBSERVATION_FIELD = Pattern.compile("observations\\[(\\d+)\\]");

  private final ObserveServiceGrpc.ObserveServiceBlockingStub stub;
  private final ObserverOptions options;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition(); // resolved grew, or the sender is woken
  private final ArrayDeque<Observation> buffer = new ArrayDeque<>();
  private final long[] dropped = new long[DropReason.values().length];
  private final Thread sender;
  private int inFlight;
  private long accepted;
  private long resolved;
  private long queued;
  private long duplicate;
  private long retries;
  private boolean closed;
  private boolean woken;
  private volatile boolean aborted;
  private volatile Context.CancellableContext call;

  Observer(Channel channel, ObserverOptions options) {
    this.stub = ObserveServiceGrpc.newBlockingStub(channel);
    this.options = options;
    this.sender = new Thread(this::run, "scorewire-observer");
    this.sender.setDaemon(true);
    this.sender.start();
  }

  /**
   * Buffers {@code observation} to be sent; true if taken, false if dropped (and counted). An
   * unset {@code observed_at} is now. Never throws, never waits on the network.
   */
  public boolean observe(Observation observation) {
    if (observation == null) {
      return drop(DropReason.INVALID);
    }
    String traceId = observation.getTrace().getTraceId();
    String spanId = observation.getTrace().getSpanId();
    if ((!traceId.isEmpty() && !TRACE_ID.matcher(traceId).matches())
        || (!spanId.isEmpty() && !SPAN_ID.matcher(spanId).matches())) {
      return drop(DropReason.INVALID);
    }
    Observation obs =
        observation.hasObservedAt()
            ? observation
            : observation.toBuilder().setObservedAt(now()).build();
    lock.lock();
    try {
      if (closed) {
        dropped[DropReason.CLOSED.ordinal()]++;
        return false;
      }
      if (buffer.size() + inFlight >= options.bufferSize()) {
        dropped[DropReason.BUFFER_FULL.ordinal()]++;
        return false;
      }
      buffer.add(obs);
      accepted++;
      if (buffer.size() >= options.batchSize()) {
        wakeLocked();
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** The counters now. */
  public Stats stats() {
    lock.lock();
    try {
      Map<DropReason, Long> byReason = new EnumMap<>(DropReason.class);
      for (DropReason r : DropReason.values()) {
        byReason.put(r, dropped[r.ordinal()]);
      }
      return new Stats(
          accepted, queued, duplicate, Collections.unmodifiableMap(byReason), buffer.size() + inFlight, retries);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Sends everything observed so far and waits until each is acknowledged or dropped; false if
   * {@code timeout} passed first (they stay buffered and are still sent).
   */
  public boolean flush(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      long target = accepted;
      wakeLocked();
      return awaitResolved(target, deadline);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Stops taking observations, sends what is buffered for up to {@code timeout}, then drops
   * what is left ({@link DropReason#CLOSED}); true if nothing had to be dropped.
   */
  public boolean close(Duration timeout) {
    lock.lock();
    try {
      closed = true;
      wakeLocked();
    } finally {
      lock.unlock();
    }
    try {
      sender.join(Math.max(1, timeout.toMillis()));
      if (!sender.isAlive()) {
        return !aborted;
      }
      aborted = true;
      Context.CancellableContext current = call;
      if (current != null) {
        current.cancel(null);
      }
      lock.lock();
      try {
        wakeLocked();
      } finally {
        lock.unlock();
      }
      sender.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return false;
  }

  /** Closes with a five-second deadline. */
  @Override
  public void close() {
    close(Duration.ofSeconds(5));
  }

  private static Timestamp now() {
    java.time.Instant t = java.time.Instant.now();
    return Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build();
  }

  private boolean drop(DropReason reason) {
    lock.lock();
    try {
      dropped[reason.ordinal()]++;
      return false;
    } finally {
      lock.unlock();
    }
  }

  private void wakeLocked() {
    woken = true;
    changed.signalAll();
  }

  private boolean awaitResolved(long target, long deadlineNanos) {
    try {
      while (resolved < target) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        changed.awaitNanos(left);
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The sender: batches whenever woken or every flush interval, until closed and empty. */
  private void run() {
    while (true) {
      lock.lock();
      try {
        long wait = options.flushInterval().toNanos();
        while (!woken && !aborted && wait > 0) {
          wait = changed.awaitNanos(wait);
        }
        woken = false;
      } catch (InterruptedException e) {
        aborted = true;
      } finally {
        lock.unlock();
      }
      while (!aborted) {
        List<Observation> batch = take();
        if (batch.isEmpty()) {
          break;
        }
        send(batch);
      }
      int left;
      lock.lock();
      try {
        left = buffer.size();
        if (aborted) {
          buffer.clear();
          inFlight += left;
        } else if (closed && left == 0) {
          return;
        }
      } finally {
        lock.unlock();
      }
      if (aborted) {
        resolve(null, DropReason.CLOSED, left);
        return;
      }
    }
  }

  private List<Observation> take() {
    lock.lock();
    try {
      int n = Math.min(buffer.size(), options.batchSize());
      List<Observation> batch = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        batch.add(buffer.poll());
      }
      inFlight += n;
      return batch;
    } finally {
      lock.unlock();
    }
  }

  /**
   * One batch, with retries; then counted. When INVALID_ARGUMENT names the bad observations of
   * the batch, only those are dropped and the rest sent again, once.
   */
  private void send(List<Observation> batch) {
    ObserveRequest request = ObserveRequest.newBuilder().addAllObservations(batch).build();
    long backoff = options.initialBackoff().toNanos();
    boolean split = false;
    for (int attempt = 1; ; attempt++) {
      Context.CancellableContext context = Context.current().withCancellation();
      call = context;
      try {
        if (aborted) {
          context.cancel(null); // close may have looked before this call began
        }
        ObserveRequest sent = request;
        ObserveResponse response =
            context.call(
                () ->
                    stub.withDeadlineAfter(options.callDeadline().toNanos(), TimeUnit.NANOSECONDS)
                        .observe(sent));
        resolve(response, null, batch.size());
        return;
      } catch (StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        if (aborted || code == Status.Code.CANCELLED) {
          resolve(null, DropReason.CLOSED, batch.size());
          return;
        }
        if (!RETRYABLE.contains(code)) {
          Set<Integer> bad = split ? null : refused(e, batch.size());
          if (bad != null && !bad.isEmpty() && bad.size() < batch.size()) {
            split = true;
            resolve(null, DropReason.REJECTED, bad.size());
            List<Observation> keep = new ArrayList<>(batch.size() - bad.size());
            for (int i = 0; i < batch.size(); i++) {
              if (!bad.contains(i)) {
                keep.add(batch.get(i));
              }
            }
            batch = keep;
            request = ObserveRequest.newBuilder().addAllObservations(batch).build();
            continue;
          }
          resolve(null, DropReason.REJECTED, batch.size());
          return;
        }
      } catch (Exception e) { // a fault outside gRPC: nothing to retry
        resolve(null, DropReason.REJECTED, batch.size());
        return;
      } finally {
        call = null;
        context.cancel(null);
      }
      if (attempt >= options.maxAttempts()) {
        resolve(null, DropReason.RETRIES_EXHAUSTED, batch.size());
        return;
      }
      if (!backOff(backoff)) {
        resolve(null, DropReason.CLOSED, batch.size());
        return;
      }
      backoff = Math.min(2 * backoff, options.maxBackoff().toNanos());
    }
  }

  /**
   * The positions of the observations an INVALID_ARGUMENT names ({@code
   * observations[3].metadata.route}), or null unless every violation names one below {@code n}.
   */
  private static Set<Integer> refused(StatusRuntimeException error, int n) {
    if (error.getStatus().getCode() != Status.Code.INVALID_ARGUMENT) {
      return null;
    }
    Set<Integer> bad = new HashSet<>();
    for (FieldViolation v : ScorewireException.violationsOf(error)) {
      Matcher m = OBSERVATION_FIELD.matcher(v.field());
      if (!m.lookingAt()) {
        return null;
      }
      int i;
      try {
        i = Integer.parseInt(m.group(1));
      } catch (NumberFormatException tooBig) {
        return null;
      }
      if (i >= n) {
        return null;
      }
      bad.add(i);
    }
    return bad;
  }

  /** Waits a random time up to {@code boundNanos} (full jitter); false if aborted. */
  private boolean backOff(long boundNanos) {
    long wait = ThreadLocalRandom.current().nextLong(boundNanos) + 1;
    lock.lock();
    try {
      retries++;
      while (!aborted && wait > 0) {
        wait = changed.awaitNanos(wait);
      }
      return !aborted;
    } catch (InterruptedException e) {
      return false;
    } finally {
      lock.unlock();
    }
  }

  private void resolve(ObserveResponse response, DropReason reason, int n) {
    lock.lock();
    try {
      if (response != null) {
        for (ObservationAck ack : response.getAcksList()) {
          if (ack.getStatus() == ObservationStatus.OBSERVATION_STATUS_DUPLICATE) {
            duplicate++;
          } else {
            queued++;
          }
        }
      } else if (reason != null) {
        dropped[reason.ordinal()] += n;
      }
      inFlight -= n;
      resolved += n;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }
}
