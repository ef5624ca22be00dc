package dev.scorewire.client;

import dev.scorewire.v1.Job;
import dev.scorewire.v1.JobServiceGrpc;
import dev.scorewire.v1.WatchJobRequest;
import dev.scorewire.v1.WatchJobResponse;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * One WatchJob call ({@link ScorewireClient#watchJob}): an iterator of the job as it is now,
 * then at each change of its state or progress, which ends after the job has ended
 * (SUCCEEDED, FAILED or CANCELLED): the last job it returns. Not thread-safe. Closing a
 * watch that has not ended cancels the call; a for-each loop left early should close it
 * (try-with-resources).
 */
public final class JobWatch implements Iterator<Job>, Iterable<Job>, AutoCloseable {
  private final Context.CancellableContext context;
  private final Iterator<WatchJobResponse> responses;
  private ScorewireException failure;
  private boolean ended;

  JobWatch(JobServiceGrpc.JobServiceBlockingStub stub, String jobId) {
    // The call belongs to this context, so cancelling the context cancels the call.
    context = Context.current().withCancellation();
    Context previous = context.attach();
    try {
      responses = stub.watchJob(WatchJobRequest.newBuilder().setJobId(jobId).build());
    } finally {
      context.detach(previous);
    }
  }

  /** Returns this watch, so it can be used in a for-each loop (once). */
  @Override
  public Iterator<Job> iterator() {
    return this;
  }

  /**
   * Whether another update follows; blocks until one arrives or the job has ended.
   *
   * @throws ScorewireException when the call fails
   */
  @Override
  public boolean hasNext() {
    if (failure != null) {
      throw failure;
    }
    if (ended) {
      return false;
    }
    try {
      if (responses.hasNext()) {
        return true;
      }
      ended = true;
      return false;
    } catch (StatusRuntimeException e) {
      failure = ScorewireException.from(e);
      context.cancel(null);
      throw failure;
    }
  }

  /** The job at its next change. */
  @Override
  public Job next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the job has ended");
    }
    return responses.next().getJob();
  }

  /** Cancels the call unless it has already ended. */
  @Override
  public void close() {
    if (!ended && failure == null) {
      context.cancel(null);
      failure = new ScorewireException(Status.Code.CANCELLED, "the watch was closed", List.of(), null);
    }
  }
}
