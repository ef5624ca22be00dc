package dev.scorewire.client;

import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSummary;
import dev.scorewire.v1.SuiteFormat;
import io.grpc.Context;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link ScorewireClient#runSuiteSharded}: one batch as chunks of consecutive cases,
 * {@code shards} RunSuite calls at a time on threads of its own, each chunk sent again
 * whole when its replica was lost; a request without cases, or a checkllm batch (which
 * the server scores only with every combination present), is one chunk. The Go client's
 * {@code RunSuiteSharded}.
 */
final class Shards {
  /**
   * What gRPC transports say when they lost a stream, as opposed to a status the server
   * chose: the Go client's list, and grpc-java's own INTERNAL "Received unexpected EOS on
   * [non-]empty DATA frame from server", which a proxy ending a lost replica's stream
   * without trailers gives (its Netty says "RST_STREAM closed stream").
   */
  static final List<String> BROKEN_STREAM =
      List.of(
          "RST_STREAM",
          "Stream removed",
          "without sending trailers",
          "unexpected EOS",
          "ended without a summary");

  /** Consecutive cases of the caller's request, from {@code offset}. */
  record Chunk(int offset, RunSuiteRequest request) {}

  private final ScorewireClient client;
  private final ShardOptions options;
  private final Duration deadline;
  private final Context.CancellableContext context;
  private final List<Chunk> chunks;
  private final AtomicInteger next = new AtomicInteger();
  private final AtomicInteger retries = new AtomicInteger();
  // Guarded by this: what finished chunks brought, and the first failure.
  private final List<CaseResult> results = new ArrayList<>();
  private final List<RunSummary> summaries = new ArrayList<>();
  // Each recorded chunk's run_id by the chunk's offset, so they come out in case order.
  private final TreeMap<Integer, String> runIds = new TreeMap<>();
  private RuntimeException failure;

  private Shards(ScorewireClient client, RunSuiteRequest request, ShardOptions options, Duration deadline) {
    this.client = client;
    this.options = options;
    this.deadline = deadline;
    this.chunks = split(request, options);
    // Every chunk's call belongs to this context: cancelling it cancels them all.
    this.context = Context.current().withCancellation();
  }

  static ShardedResult run(ScorewireClient client, RunSuiteRequest request, ShardOptions options, Duration deadline) {
    return new Shards(client, request, options, deadline).run();
  }

  private ShardedResult run() {
    int workers = Math.min(options.shards(), chunks.size());
    ExecutorService pool =
        Executors.newFixedThreadPool(
            workers,
            task -> {
              Thread t = new Thread(task, "scorewire-shard");
              t.setDaemon(true);
              return t;
            });
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int i = 0; i < workers; i++) {
        running.add(pool.submit(context.wrap(this::work)));
      }
      for (Future<?> f : running) {
        f.get();
      }
    } catch (InterruptedException e) {
      context.cancel(e);
      Thread.currentThread().interrupt();
      throw new ScorewireException(Status.Code.CANCELLED, "the sharded run was interrupted", List.of(), e);
    } catch (ExecutionException e) {
      // work() catches every RuntimeException; an Error is rethrown as it is.
      context.cancel(e.getCause());
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(e.getCause());
    } finally {
      pool.shutdownNow();
    }
    synchronized (this) {
      if (failure != null) {
        throw failure;
      }
      return new ShardedResult(results, Summaries.merge(summaries), retries.get(), List.copyOf(runIds.values()));
    }
  }

  /** A shard: runs chunks until none is left or the run has failed. */
  private void work() {
    for (int i = next.getAndIncrement(); i < chunks.size() && !context.isCancelled(); i = next.getAndIncrement()) {
      Chunk chunk = chunks.get(i);
      try {
        ChunkDone done = runChunk(chunk);
        synchronized (this) {
          if (failure == null) {
            results.addAll(done.results());
            summaries.add(done.summary());
            if (!done.summary().getRunId().isEmpty()) {
              runIds.put(chunk.offset(), done.summary().getRunId());
            }
            if (options.onChunk() != null) {
              options.onChunk().accept(Collections.unmodifiableList(done.results()));
            }
          }
        }
      } catch (RuntimeException e) {
        synchronized (this) {
          if (failure == null) {
            failure = e;
            context.cancel(null);
          }
        }
      }
    }
  }

  private record ChunkDone(List<CaseResult> results, RunSummary summary) {}

  /** Sends one chunk until it succeeds, fails for good or runs out of attempts. */
  private ChunkDone runChunk(Chunk chunk) {
    for (int attempt = 1; ; attempt++) {
      try {
        return runChunkOnce(chunk);
      } catch (ScorewireException e) {
        if (attempt >= options.chunkAttempts() || context.isCancelled() || !retryable(e)) {
          throw e;
        }
        retries.incrementAndGet();
      }
    }
  }

  private ChunkDone runChunkOnce(Chunk chunk) {
    try (SuiteRun run = client.runSuite(chunk.request(), deadline)) {
      List<CaseResult> got = run.remaining();
      RunSummary summary = run.summary();
      List<CaseResult> out = new ArrayList<>(got.size());
      for (CaseResult r : got) {
        out.add(chunk.offset() == 0 ? r : r.toBuilder().setIndex(r.getIndex() + chunk.offset()).build());
      }
      return new ChunkDone(out, summary);
    }
  }

  /** Whether a chunk that failed with {@code e} is worth sending to another replica. */
  static boolean retryable(ScorewireException e) {
    return switch (e.code()) {
      case UNAVAILABLE -> true;
      case INTERNAL, UNKNOWN -> BROKEN_STREAM.stream().anyMatch(e.description()::contains);
      default -> false;
    };
  }

  /**
   * Whether {@code request} must be sent as one chunk: a checkllm batch (its {@code format}
   * SUITE_FORMAT_CHECKLLM, or any case naming a combination by {@code test}, {@code
   * prompt} or {@code provider}), which the server scores only with every combination of
   * the suite present, refusing a part of it with INVALID_ARGUMENT.
   */
  static boolean whole(RunSuiteRequest request) {
    if (request.getFormat() == SuiteFormat.SUITE_FORMAT_CHECKLLM) {
      return true;
    }
    for (dev.scorewire.v1.Case c : request.getCasesList()) {
      if (!c.getTest().isEmpty() || !c.getPrompt().isEmpty() || !c.getProvider().isEmpty()) {
        return true;
      }
    }
    return false;
  }

  /**
   * {@code request}'s cases cut into consecutive chunks: at least {@code shards} of them
   * (fewer only when there are fewer cases), at most {@code chunkCases} cases each, each
   * with its share of the budget. A request without cases is one chunk, and so is a
   * checkllm batch ({@link #whole}), sent as it is.
   */
  static List<Chunk> split(RunSuiteRequest request, ShardOptions options) {
    if (whole(request)) {
      return List.of(new Chunk(0, request));
    }
    int n = request.getCasesCount();
    int size = options.chunkCases();
    int count = Math.max(Math.max(Math.min(options.shards(), n), (n + size - 1) / size), 1);
    int per = Math.max((n + count - 1) / count, 1);
    RunSuiteRequest template = request.toBuilder().clearCases().build();
    List<Chunk> out = new ArrayList<>();
    for (int offset = 0; offset < Math.max(n, 1); offset += per) {
      List<dev.scorewire.v1.Case> part = request.getCasesList().subList(offset, Math.min(offset + per, n));
      RunSuiteRequest.Builder r = template.toBuilder().addAllCases(part);
      if (request.hasBudgetUsd() && n > 0) {
        r.setBudgetUsd(request.getBudgetUsd() * part.size() / n);
      }
      out.add(new Chunk(offset, r.build()));
    }
    return out;
  }
}
