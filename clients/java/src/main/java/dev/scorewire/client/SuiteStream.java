package dev.scorewire.client;

import dev.scorewire.v1.CaseChunk;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSuiteResponse;
import dev.scorewire.v1.RunSuiteStreamConfig;
import dev.scorewire.v1.RunSuiteStreamRequest;
import dev.scorewire.v1.RunSuiteStreamResponse;
import dev.scorewire.v1.ScoringServiceGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * One RunSuiteStream call read as the blocking stub reads a RunSuite: an iterator of its
 * responses, each as the RunSuiteResponse it equals field for field, that throws the
 * call's failure as a {@link StatusRuntimeException}, so {@link SuiteRun} reads either
 * call the same way. The request goes as its config (cases cleared, their count declared),
 * then its cases {@link ScorewireClient#STREAM_CHUNK_CASES} a message, then the
 * half-close; each message is built when the transport is ready for it (gRPC flow
 * control), so the server checks and scores the first chunks while later ones are still
 * being serialized here. Like the blocking stub, it asks for one response at a time. The
 * call is cancelled through the context it was started in ({@link SuiteRun}'s).
 */
final class SuiteStream implements Iterator<RunSuiteResponse> {
  private final Inbox<RunSuiteStreamResponse> inbox = new Inbox<>();
  private final ClientCallStreamObserver<RunSuiteStreamRequest> call;

  SuiteStream(ScoringServiceGrpc.ScoringServiceStub stub, RunSuiteRequest request) {
    Sender sender = new Sender(request);
    ClientResponseObserver<RunSuiteStreamRequest, RunSuiteStreamResponse> observer =
        new ClientResponseObserver<>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<RunSuiteStreamRequest> requests) {
            requests.disableAutoRequestWithInitial(1);
            requests.setOnReadyHandler(() -> sender.sendWhileReady(requests));
          }

          @Override
          public void onNext(RunSuiteStreamResponse response) {
            inbox.add(response);
          }

          @Override
          public void onError(Throwable error) {
            sender.stop();
            inbox.fail(
                error instanceof StatusRuntimeException e
                    ? e
                    : Status.fromThrowable(error).asRuntimeException(Status.trailersFromThrowable(error)));
          }

          @Override
          public void onCompleted() {
            sender.stop();
            inbox.end();
          }
        };
    call = (ClientCallStreamObserver<RunSuiteStreamRequest>) stub.runSuiteStream(observer);
  }

  @Override
  public boolean hasNext() {
    try {
      return inbox.hasNext();
    } catch (InterruptedException e) {
      // As the blocking stub: the caller's SuiteRun cancels the call on this status.
      Thread.currentThread().interrupt();
      throw Status.CANCELLED.withDescription("interrupted").withCause(e).asRuntimeException();
    }
  }

  @Override
  public RunSuiteResponse next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the stream has no more responses");
    }
    RunSuiteStreamResponse response = inbox.next();
    call.request(1); // one read, one more may come
    return switch (response.getEventCase()) {
      case RESULTS -> RunSuiteResponse.newBuilder().setResults(response.getResults()).build();
      case SUMMARY -> RunSuiteResponse.newBuilder().setSummary(response.getSummary()).build();
      default -> RunSuiteResponse.getDefaultInstance(); // an event this client does not know
    };
  }

  /**
   * The messages of the call, sent as the transport takes them. Used only on gRPC's
   * callback executor, which runs one callback at a time, so it needs no lock. {@link
   * AsyncCalls} sends its RunSuiteStreams with it too.
   */
  static final class Sender {
    private final RunSuiteRequest request;
    private int next = -1; // the next case to send; -1 before the config
    private boolean done;

    Sender(RunSuiteRequest request) {
      this.request = request;
    }

    void sendWhileReady(ClientCallStreamObserver<RunSuiteStreamRequest> requests) {
      int count = request.getCasesCount();
      while (!done && requests.isReady()) {
        if (next < 0) {
          RunSuiteStreamConfig config =
              RunSuiteStreamConfig.newBuilder()
                  .setRequest(request.toBuilder().clearCases())
                  .setCaseCount(count)
                  .build();
          requests.onNext(RunSuiteStreamRequest.newBuilder().setConfig(config).build());
          next = 0;
        } else if (next < count) {
          int end = Math.min(count, next + ScorewireClient.STREAM_CHUNK_CASES);
          CaseChunk chunk =
              CaseChunk.newBuilder().addAllCases(request.getCasesList().subList(next, end)).build();
          requests.onNext(RunSuiteStreamRequest.newBuilder().setCases(chunk).build());
          next = end;
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
