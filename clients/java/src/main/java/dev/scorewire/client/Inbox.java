package dev.scorewire.client;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The responses of one streaming call as its reader takes them, the blocking stub's way:
 * gRPC's callbacks {@link #add} responses, then {@link #fail} or {@link #end} once; the
 * reader, on one thread, asks {@link #hasNext} (which blocks until something arrives and
 * throws the call's failure, again on every later ask) and then takes the response with
 * {@link #next}. {@link SuiteStream}'s and {@link ScoreStream}'s.
 */
final class Inbox<T> {
  private static final Object END = new Object();

  private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
  private Object head; // what the reader has taken and not yet consumed

  void add(T response) {
    queue.add(response);
  }

  /** The call failed with {@code failure}, which the reader gets from then on. */
  void fail(RuntimeException failure) {
    queue.add(failure);
  }

  /** The call ended cleanly. */
  void end() {
    queue.add(END);
  }

  /**
   * Whether a response follows; blocks until one arrives or the call ends.
   *
   * @throws RuntimeException the call's failure
   * @throws InterruptedException when interrupted while waiting (nothing is taken)
   */
  boolean hasNext() throws InterruptedException {
    if (head == null) {
      head = queue.take();
    }
    if (head instanceof RuntimeException failure) {
      throw failure;
    }
    return head != END;
  }

  /** The response {@link #hasNext} has just said follows. */
  @SuppressWarnings("unchecked")
  T next() {
    T response = (T) head;
    head = null;
    return response;
  }

  /** Whether the reader has seen the call end, cleanly or not. */
  boolean ended() {
    return head == END || head instanceof RuntimeException;
  }
}
