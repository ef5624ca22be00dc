package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.scorewire.v1.ScoreRequest;
import dev.scorewire.v1.ScoreResponse;
import dev.scorewire.v1.ScoringServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A unary call of the asynchronous form that the server never answers, against a fake
 * ScoringService on 127.0.0.1 (a real server answers a Score before a test could cancel
 * it): cancelling the future cancels the call on the server, and a deadline fails it as
 * it fails the blocking call.
 */
@Timeout(30)
class AsyncCancelTest extends FakeServerTest<AsyncCancelTest.SilentScoring> {
  private static final ScoreRequest REQUEST = ScoreRequest.newBuilder().addCompact("contains:x").build();

  @Override
  SilentScoring newService() {
    return new SilentScoring();
  }

  @Test
  void cancellingAScoreCancelsTheCallOnTheServer() throws Exception {
    CompletableFuture<ScoreResponse> future = client.async().score(REQUEST);
    service.started.get(10, TimeUnit.SECONDS);
    assertTrue(future.cancel(true));
    assertThrows(CancellationException.class, future::join);
    service.cancelled.get(10, TimeUnit.SECONDS); // the server saw the cancel
  }

  @Test
  void aDeadlineFailsTheFutureAsItFailsTheBlockingCall() {
    Duration deadline = Duration.ofMillis(200);
    ScorewireException blocking = assertThrows(ScorewireException.class, () -> client.score(REQUEST, deadline));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, blocking.code());
    CompletableFuture<ScoreResponse> future = client.async().score(REQUEST, deadline);
    ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(10, TimeUnit.SECONDS));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, assertInstanceOf(ScorewireException.class, e.getCause()).code());
  }

  /** Takes every Score and never answers; records the first one's start and cancel. */
  static final class SilentScoring extends ScoringServiceGrpc.ScoringServiceImplBase {
    final CompletableFuture<Void> started = new CompletableFuture<>();
    final CompletableFuture<Void> cancelled = new CompletableFuture<>();

    @Override
    public void score(ScoreRequest request, StreamObserver<ScoreResponse> response) {
      ((ServerCallStreamObserver<ScoreResponse>) response).setOnCancelHandler(() -> cancelled.complete(null));
      started.complete(null);
    }
  }
}
