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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

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
  private static final Object END = new Object();

  /** How many responses may be received ahead of the reader. */
  public static final int WINDOW = 256;

  private final BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
  private final ClientCallStreamObserver<ScoreStreamRequest> requests;
  private Object head;

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
            inbox.add(ScorewireException.from(error));
          }

          @Override
          public void onCompleted() {
            inbox.add(END);
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
    if (head == null) {
      try {
        head = inbox.take();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        close();
        throw new ScorewireException(
            Status.Code.CANCELLED, "interrupted", List.of(), e);
      }
    }
    if (head instanceof ScorewireException failure) {
      throw failure;
    }
    return head != END;
  }

  /** The next response. */
  @Override
  public ScoreStreamResponse next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the stream has no more responses");
    }
    ScoreStreamResponse response = (ScoreStreamResponse) head;
    head = null;
    synchronized (requests) {
      requests.request(1); // one read, one more may come
    }
    return response;
  }

  /** Cancels the call unless it has already ended. */
  @Override
  public void close() {
    if (head != END && !(head instanceof ScorewireException)) {
      synchronized (requests) {
        requests.cancel("closed by the client", null);
      }
    }
  }
}
