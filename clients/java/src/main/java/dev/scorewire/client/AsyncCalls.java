package dev.scorewire.client;

import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSuiteResponse;
import dev.scorewire.v1.RunSuiteStreamRequest;
import dev.scorewire.v1.RunSuiteStreamResponse;
import dev.scorewire.v1.RunSummary;
import dev.scorewire.v1.ScoringServiceGrpc;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * grpc-java's asynchronous stub calls as {@link CompletableFuture}s, for {@link
 * ScorewireAsyncClient}: a failure completes the future exceptionally with the {@link
 * ScorewireException} the blocking client would throw ({@link ScorewireException#from}),
 * and cancelling the future cancels the call.
 */
final class AsyncCalls {
  private AsyncCalls() {}

  /**
   * Starts a unary call: {@code method} is a stub method such as {@code stub::score},
   * bound to a stub that already carries the call's deadline.
   */
  static <Q, R> CompletableFuture<R> unary(BiConsumer<Q, StreamObserver<R>> method, Q request) {
    return unary(method, request, Function.identity());
  }

  /**
   * Starts a unary call whose future holds {@code answer} of the response (the run of a
   * GetRunResponse, nothing for a DeleteRunResponse): the same future, so cancelling it
   * still cancels the call and a failure is still the ScorewireException itself.
   */
  static <Q, R, T> CompletableFuture<T> unary(
      BiConsumer<Q, StreamObserver<R>> method, Q request, Function<R, T> answer) {
    CompletableFuture<T> future = new CompletableFuture<>();
    method.accept(
        request,
        new ClientResponseObserver<Q, R>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<Q> call) {
            cancelWith(future, call);
          }

          @Override
          public void onNext(R response) {
            future.complete(answer.apply(response));
          }

          @Override
          public void onError(Throwable error) {
            future.completeExceptionally(ScorewireException.from(error));
          }

          @Override
          public void onCompleted() {
            // A unary call's response came in onNext; an empty answer would be an error.
          }
        });
    return future;
  }

  /**
   * Runs a suite and collects it: a RunSuite, or for a batch over {@link
   * ScorewireClient#STREAM_CHUNK_CASES} cases a RunSuiteStream whose chunks are sent as
   * the transport takes them (as {@link ScorewireClient#runSuite} does).
   */
  static CompletableFuture<SuiteResult> runSuite(
      ScoringServiceGrpc.ScoringServiceStub stub, RunSuiteRequest request) {
    Collector collected = new Collector();
    if (ScorewireClient.streamed(request)) {
      stub.runSuiteStream(collected.streamObserver(new SuiteStream.Sender(request)));
    } else {
      stub.runSuite(request, collected.observer());
    }
    return collected.future;
  }

  /** Cancels the call when (and only when) the caller cancels {@code future}. */
  static void cancelWith(CompletableFuture<?> future, ClientCallStreamObserver<?> call) {
    future.whenComplete(
        (result, error) -> {
          if (future.isCancelled()) {
            call.cancel("the caller cancelled the future", null);
          }
        });
  }

  /**
   * One run's results and summary as they arrive. gRPC delivers one call's callbacks one
   * at a time, so the list needs no lock; the future publishes it.
   */
  private static final class Collector {
    final CompletableFuture<SuiteResult> future = new CompletableFuture<>();
    private final List<CaseResult> results = new ArrayList<>();
    private RunSummary summary;

    void results(List<CaseResult> batch) {
      results.addAll(batch);
    }

    void summary(RunSummary last) {
      summary = last;
    }

    void fail(Throwable error) {
      future.completeExceptionally(ScorewireException.from(error));
    }

    void end() {
      if (summary == null) {
        future.completeExceptionally(SuiteRun.noSummary());
      } else {
        future.complete(new SuiteResult(results, summary));
      }
    }

    ClientResponseObserver<RunSuiteRequest, RunSuiteResponse> observer() {
      return new ClientResponseObserver<>() {
        @Override
        public void beforeStart(ClientCallStreamObserver<RunSuiteRequest> call) {
          cancelWith(future, call);
        }

        @Override
        public void onNext(RunSuiteResponse response) {
          switch (response.getEventCase()) {
            case RESULTS -> results(response.getResults().getResultsList());
            case SUMMARY -> summary(response.getSummary());
            default -> {
              // An event this client does not know yet; skip it.
            }
          }
        }

        @Override
        public void onError(Throwable error) {
          fail(error);
        }

        @Override
        public void onCompleted() {
          end();
        }
      };
    }

    ClientResponseObserver<RunSuiteStreamRequest, RunSuiteStreamResponse> streamObserver(
        SuiteStream.Sender sender) {
      return new ClientResponseObserver<>() {
        @Override
        public void beforeStart(ClientCallStreamObserver<RunSuiteStreamRequest> call) {
          cancelWith(future, call);
          call.setOnReadyHandler(() -> sender.sendWhileReady(call));
        }

        @Override
        public void onNext(RunSuiteStreamResponse response) {
          switch (response.getEventCase()) {
            case RESULTS -> results(response.getResults().getResultsList());
            case SUMMARY -> summary(response.getSummary());
            default -> {
              // An event this client does not know yet; skip it.
            }
          }
        }

        @Override
        public void onError(Throwable error) {
          sender.stop();
          fail(error);
        }

        @Override
        public void onCompleted() {
          sender.stop();
          end();
        }
      };
    }
  }
}
