package dev.scorewire.client;

import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSuiteResponse;
import dev.scorewire.v1.RunSummary;
import dev.scorewire.v1.ScoringServiceGrpc;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Supplier;

/**
 * One RunSuite call (or RunSuiteStream, for a batch over {@link
 * ScorewireClient#STREAM_CHUNK_CASES} cases; read the same way): an iterator over the case results (in completion order, each case
 * exactly once) and, once they are consumed, the run's {@link #summary()}. Not thread-safe.
 * Closing a run that has not ended cancels the call.
 */
public final class SuiteRun implements Iterator<CaseResult>, Iterable<CaseResult>, AutoCloseable {
  private final Context.CancellableContext context;
  private final Iterator<RunSuiteResponse> responses;
  private Iterator<CaseResult> batch = Collections.emptyIterator();
  private RunSummary summary;
  private ScorewireException failure;
  private boolean ended;

  SuiteRun(ScoringServiceGrpc.ScoringServiceBlockingStub stub, RunSuiteRequest request) {
    this(() -> stub.runSuite(request));
  }

  /** A RunSuiteStream of {@code request}'s cases in chunks, answered as its RunSuite. */
  static SuiteRun streamed(ScoringServiceGrpc.ScoringServiceStub stub, RunSuiteRequest request) {
    return new SuiteRun(() -> new SuiteStream(stub, request));
  }

  private SuiteRun(Supplier<Iterator<RunSuiteResponse>> start) {
    // The call belongs to this context, so cancelling the context cancels the call.
    context = Context.current().withCancellation();
    Context previous = context.attach();
    try {
      responses = start.get();
    } finally {
      context.detach(previous);
    }
  }

  /** Returns this run, so it can be used in a for-each loop (once). */
  @Override
  public Iterator<CaseResult> iterator() {
    return this;
  }

  /**
   * Whether another result follows; blocks until one arrives or the stream ends.
   *
   * @throws ScorewireException when the call fails
   */
  @Override
  public boolean hasNext() {
    while (!batch.hasNext()) {
      if (failure != null) {
        throw failure;
      }
      if (ended) {
        return false;
      }
      advance();
    }
    return true;
  }

  /** The next case result. */
  @Override
  public CaseResult next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the run has no more results");
    }
    return batch.next();
  }

  /**
   * The run's summary: drains (and drops) any results not yet consumed, then returns the
   * summary the server sent last.
   *
   * @throws ScorewireException when the call fails
   */
  public RunSummary summary() {
    while (hasNext()) {
      next();
    }
    return summary;
  }

  /** Consumes every remaining result into a list; then {@link #summary()} is at hand. */
  public List<CaseResult> remaining() {
    List<CaseResult> out = new ArrayList<>();
    while (hasNext()) {
      out.add(next());
    }
    return out;
  }

  /** Cancels the call unless it has already ended. */
  @Override
  public void close() {
    if (!ended && failure == null) {
      context.cancel(null);
      batch = Collections.emptyIterator();
      failure = new ScorewireException(Status.Code.CANCELLED, "the run was closed", List.of(), null);
    }
  }

  /** The failure of a run whose stream ended cleanly but sent no summary. */
  static ScorewireException noSummary() {
    return new ScorewireException(
        Status.Code.INTERNAL, "the stream ended without a summary", List.of(), null);
  }

  private void advance() {
    try {
      if (!responses.hasNext()) {
        ended = true;
        if (summary == null) {
          failure = noSummary();
          throw failure;
        }
        return;
      }
      RunSuiteResponse response = responses.next();
      switch (response.getEventCase()) {
        case RESULTS -> batch = response.getResults().getResultsList().iterator();
        case SUMMARY -> summary = response.getSummary();
        default -> {
          // An event this client does not know yet; skip it.
        }
      }
    } catch (StatusRuntimeException e) {
      failure = ScorewireException.from(e);
      context.cancel(null);
      throw failure;
    }
  }
}
