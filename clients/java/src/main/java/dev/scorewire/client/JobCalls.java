package dev.scorewire.client;

import dev.scorewire.v1.Case;
import dev.scorewire.v1.CreateJobRequest;
import dev.scorewire.v1.CreateJobResponse;
import dev.scorewire.v1.Job;
import dev.scorewire.v1.JobCases;
import dev.scorewire.v1.JobConfig;
import dev.scorewire.v1.JobServiceGrpc;
import dev.scorewire.v1.JobState;
import dev.scorewire.v1.ListJobsRequest;
import dev.scorewire.v1.ListJobsResponse;
import dev.scorewire.v1.WatchJobRequest;
import dev.scorewire.v1.WatchJobResponse;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The evaluation-job calls that need grpc-java's asynchronous stub, for {@link
 * ScorewireClient} and {@link ScorewireAsyncClient}: CreateJob (a client stream, its
 * messages sent as the transport takes them) and WatchJob with a callback. A failure
 * completes the future exceptionally with a {@link ScorewireException}; cancelling the
 * future cancels the call.
 */
final class JobCalls {
  private JobCalls() {}

  /** Whether a job in {@code state} has ended: SUCCEEDED, FAILED or CANCELLED. */
  static boolean ended(JobState state) {
    return state == JobState.JOB_STATE_SUCCEEDED
        || state == JobState.JOB_STATE_FAILED
        || state == JobState.JOB_STATE_CANCELLED;
  }

  /**
   * {@code cases} cut into runs of at most {@link ScorewireClient#JOB_CHUNK_CASES} cases and
   * {@link ScorewireClient#JOB_CHUNK_BYTES} serialized bytes (a larger case alone), in order.
   */
  static List<List<Case>> chunks(List<Case> cases) {
    List<List<Case>> out = new ArrayList<>();
    int start = 0;
    long size = 0;
    for (int i = 0; i < cases.size(); i++) {
      int n = cases.get(i).getSerializedSize();
      if (i > start
          && (i - start == ScorewireClient.JOB_CHUNK_CASES || size + n > ScorewireClient.JOB_CHUNK_BYTES)) {
        out.add(cases.subList(start, i));
        start = i;
        size = 0;
      }
      size += n;
    }
    if (start < cases.size()) {
      out.add(cases.subList(start, cases.size()));
    }
    return out;
  }

  /** Starts a CreateJob of {@code config} (its case count set) and {@code cases}. */
  static CompletableFuture<Job> create(JobServiceGrpc.JobServiceStub stub, JobConfig config, Iterable<Case> cases) {
    List<Case> all = new ArrayList<>();
    cases.forEach(all::add);
    Sender sender = new Sender(config.toBuilder().setCaseCount(all.size()).build(), chunks(all));
    CompletableFuture<Job> future = new CompletableFuture<>();
    stub.createJob(
        new ClientResponseObserver<CreateJobRequest, CreateJobResponse>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<CreateJobRequest> call) {
            AsyncCalls.cancelWith(future, call);
            call.setOnReadyHandler(() -> sender.sendWhileReady(call));
          }

          @Override
          public void onNext(CreateJobResponse response) {
            future.complete(response.getJob());
          }

          @Override
          public void onError(Throwable error) {
            sender.stop();
            future.completeExceptionally(ScorewireException.from(error));
          }

          @Override
          public void onCompleted() {
            sender.stop();
          }
        });
    return future;
  }

  /**
   * Starts a WatchJob: {@code onUpdate} receives the job now and at each change, on gRPC's
   * callback thread, and the future completes with the last, the job ended. An exception
   * {@code onUpdate} throws cancels the call and completes the future with it.
   */
  static CompletableFuture<Job> watch(JobServiceGrpc.JobServiceStub stub, String jobId, Consumer<Job> onUpdate) {
    CompletableFuture<Job> future = new CompletableFuture<>();
    stub.watchJob(
        WatchJobRequest.newBuilder().setJobId(jobId).build(),
        new ClientResponseObserver<WatchJobRequest, WatchJobResponse>() {
          private ClientCallStreamObserver<WatchJobRequest> call;
          private Job last;

          @Override
          public void beforeStart(ClientCallStreamObserver<WatchJobRequest> call) {
            this.call = call;
            AsyncCalls.cancelWith(future, call);
          }

          @Override
          public void onNext(WatchJobResponse response) {
            last = response.getJob();
            try {
              onUpdate.accept(last);
            } catch (RuntimeException e) {
              future.completeExceptionally(e);
              call.cancel("the update callback failed", e);
            }
          }

          @Override
          public void onError(Throwable error) {
            future.completeExceptionally(ScorewireException.from(error));
          }

          @Override
          public void onCompleted() {
            if (last == null || !ended(last.getState())) {
              future.completeExceptionally(notEnded());
            } else {
              future.complete(last);
            }
          }
        });
    return future;
  }

  /**
   * The jobs of {@code first}'s page and the pages after it, each fetched with {@code page}
   * when the iteration reaches it; every {@code iterator()} starts again from {@code first}.
   */
  static Iterable<Job> pages(Function<ListJobsRequest, ListJobsResponse> page, ListJobsRequest first) {
    return () ->
        new Iterator<>() {
          private Iterator<Job> jobs = Collections.emptyIterator();
          private String token = first.getPageToken();
          private boolean last;

          @Override
          public boolean hasNext() {
            while (!jobs.hasNext() && !last) {
              ListJobsResponse response = page.apply(first.toBuilder().setPageToken(token).build());
              jobs = response.getJobsList().iterator();
              token = response.getNextPageToken();
              last = token.isEmpty();
            }
            return jobs.hasNext();
          }

          @Override
          public Job next() {
            if (!hasNext()) {
              throw new NoSuchElementException("no more jobs");
            }
            return jobs.next();
          }
        };
  }

  /** The failure of a watch whose stream ended before the job did. */
  static ScorewireException notEnded() {
    return new ScorewireException(Status.Code.INTERNAL, "WatchJob ended before the job did", List.of(), null);
  }

  /**
   * The job of a future, waited for on the calling thread: its failure as the {@link
   * ScorewireException} itself; an interrupt cancels the call and is CANCELLED.
   */
  static Job await(CompletableFuture<Job> future) {
    try {
      return future.get();
    } catch (ExecutionException e) {
      throw ScorewireException.from(e.getCause());
    } catch (CancellationException e) {
      throw new ScorewireException(Status.Code.CANCELLED, "the call was cancelled", List.of(), e);
    } catch (InterruptedException e) {
      future.cancel(true);
      Thread.currentThread().interrupt();
      throw new ScorewireException(Status.Code.CANCELLED, "interrupted", List.of(), e);
    }
  }

  /**
   * A CreateJob's messages, sent as the transport takes them: the config, the chunks, then
   * the half-close. Used only on gRPC's callback executor, which runs one callback at a
   * time, so it needs no lock.
   */
  private static final class Sender {
    private final JobConfig config;
    private final List<List<Case>> chunks;
    private int next = -1; // the next chunk to send; -1 before the config
    private boolean done;

    Sender(JobConfig config, List<List<Case>> chunks) {
      this.config = config;
      this.chunks = chunks;
    }

    void sendWhileReady(ClientCallStreamObserver<CreateJobRequest> requests) {
      while (!done && requests.isReady()) {
        if (next < 0) {
          requests.onNext(CreateJobRequest.newBuilder().setConfig(config).build());
          next = 0;
        } else if (next < chunks.size()) {
          JobCases cases = JobCases.newBuilder().addAllCases(chunks.get(next)).build();
          requests.onNext(CreateJobRequest.newBuilder().setCases(cases).build());
          next++;
        } else {
          requests.onCompleted();
          done = true;
        }
      }
    }

    /** The call has ended: nothing more is sent. */
    void stop() {
      done = true;
    }
  }
}
