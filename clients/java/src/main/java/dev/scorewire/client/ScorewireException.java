package dev.scorewire.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import java.util.ArrayList;
import java.util.List;

/**
 * A failed scorewire call: the gRPC status code, the server's message, and for
 * INVALID_ARGUMENT every offending field, decoded from the {@code google.rpc.BadRequest}
 * detail the server sends in the {@code grpc-status-details-bin} trailer.
 */
public final class ScorewireException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status.Code code;
  private final String description;
  private final List<FieldViolation> fieldViolations;

  /** Creates an exception; {@code fieldViolations} is copied. */
  public ScorewireException(
      Status.Code code, String description, List<FieldViolation> fieldViolations, Throwable cause) {
    super(code + ": " + description, cause);
    this.code = code;
    this.description = description;
    this.fieldViolations = List.copyOf(fieldViolations);
  }

  /** The gRPC status code, such as {@code INVALID_ARGUMENT} or {@code DEADLINE_EXCEEDED}. */
  public Status.Code code() {
    return code;
  }

  /** The server's message (empty when it sent none). */
  public String description() {
    return description;
  }

  /** The BadRequest field violations, in the server's order; empty when there are none. */
  public List<FieldViolation> fieldViolations() {
    return fieldViolations;
  }

  /**
   * Whether this failure is the replica's or the transport's, not the request's, so that
   * the call is worth sending to another replica: UNAVAILABLE, or INTERNAL or UNKNOWN when
   * the transport lost the stream (a replica killed behind nginx or HAProxy). {@link
   * ScorewireClient#runSuiteSharded} sends a chunk that failed so again.
   */
  public boolean retryable() {
    return Shards.retryable(this);
  }

  /** Converts what a grpc-java call threw into a ScorewireException. */
  public static ScorewireException from(Throwable error) {
    if (error instanceof ScorewireException e) {
      return e;
    }
    // A non-gRPC throwable maps to UNKNOWN; its message stands in for the description.
    Status status = Status.fromThrowable(error);
    String message = status.getDescription();
    if (message == null) {
      message = error.getMessage() == null ? error.toString() : error.getMessage();
    }
    return new ScorewireException(status.getCode(), message, violationsOf(error), error);
  }

  /** Decodes the BadRequest field violations carried by a gRPC error, if any. */
  static List<FieldViolation> violationsOf(Throwable error) {
    com.google.rpc.Status rich = StatusProto.fromThrowable(error);
    if (rich == null) {
      return List.of();
    }
    List<FieldViolation> out = new ArrayList<>();
    for (Any detail : rich.getDetailsList()) {
      if (!detail.is(BadRequest.class)) {
        continue;
      }
      try {
        for (BadRequest.FieldViolation v : detail.unpack(BadRequest.class).getFieldViolationsList()) {
          out.add(new FieldViolation(v.getField(), v.getDescription()));
        }
      } catch (InvalidProtocolBufferException malformed) {
        // A malformed detail must not hide the status code itself.
      }
    }
    return out;
  }
}
