package dev.scorewire.client;

import dev.scorewire.v1.ScoreStreamRequest;
import dev.scorewire.v1.ScoreStreamResponse;
import dev.scorewire.v1.ScoringServiceGrpc;
import dev.scorewire.v1.StreamCase;
import dev.scorewire.v1.StreamConfig;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * One ScoreStream call. The config is sent on open; {@link #send} cases from any thread,
 * {@link #complete()} when no more follow, and iterate the responses (in completion
 * order) from one thread. At most {@link #WINDOW} responses wait unread: past that the
 * call stops asking the server for more (gRPC flow control), so a slow reader holds the
 * server back instead of growing this client's memory. Closing a stream that has not
 * ended cancels the call.
 */
public final class ScoreStream
    implements Iterator<ScoreStreamResponse>, Iterable<ScoreStreamResponse>, AutoCloseable {
  /** How many responses may be received ahead of the reader. */
  public static final int WINDOW = 256;

  private final Inbox<ScoreStreamResponse> inbox = new Inbox<>();
  private final ClientCallStreamObserver<ScoreStreamRequest> requests;

  ScoreStream(ScoringServiceGrpc.ScoringServiceStub stub, StreamConfig config) {
    ClientResponseObserver<ScoreStreamRequest, ScoreStreamResponse> observer =
        new ClientResponseObserver<>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<ScoreStreamRequest> requestStream) {
            requestStream.disableAutoInboundFlowControl();
          }

          @Override
          public void onNext(ScoreStreamResponse response) {
            inbox.add(response);
          }

          @Override
          public void onError(Throwable error) {
            inbox.fail(ScorewireException.from(error));
          }

          @Override
          public void onCompleted() {
            inbox.end();
          }
        };
    requests = (ClientCallStreamObserver<ScoreStreamRequest>) stub.scoreStream(observer);
    synchronized (requests) {
      requests.request(WINDOW); // the first window; each read asks for one more
      requests.onNext(ScoreStreamRequest.newBuilder().setConfig(config).build());
    }
  }

  /** Sends one case; its response echoes {@code streamCase.getRequestId()}. */
  public void send(StreamCase streamCase) {
    ScoreStreamRequest request = ScoreStreamRequest.newBuilder().setCase(streamCase).build();
    synchronized (requests) {
      requests.onNext(request);
    }
  }

  /** Says no more cases follow; the server then answers the ones in flight and ends. */
  public void complete() {
    synchronized (requests) {
      requests.onCompleted();
    }
  }

  /** Returns this stream, so it can be used in a for-each loop (once). */
  @Override
  public Iterator<ScoreStreamResponse> iterator() {
    return this;
  }

  /**
   * Whether another response follows; blocks until one arrives or the stream ends.
   *
   * @throws ScorewireException when the call fails
   */
  @Override
  public boolean hasNext() {
    try {
      return inbox.hasNext();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      close();
      throw new ScorewireException(Status.Code.CANCELLED, "interrupted", List.of(), e);
    }
  }

  /** The next response. */
  @Override
  public ScoreStreamResponse next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the stream has no more responses");
    }
    ScoreStreamResponse response = inbox.next();
    synchronized (requests) {
      requests.request(1); // one read, one more may come
    }
    return response;
  }

  /** Cancels the call unless it has already ended. */
  @Override
  public void close() {
    if (!inbox.ended()) {
      synchronized (requests) {
        requests.cancel("closed by the client", null);
      }
    }
  }
}
