package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.Code;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The wrapper's pure parts; they need no server. */
class ScorewireExceptionTest {
  @Test
  void fieldViolationsAreDecodedFromTheStatusDetailsOtherDetailsSkipped() {
    com.google.rpc.Status rich =
        com.google.rpc.Status.newBuilder()
            .setCode(Code.INVALID_ARGUMENT_VALUE)
            .setMessage("bad")
            .addDetails(Any.pack(RetryInfo.getDefaultInstance()))
            .addDetails(
                Any.pack(
                    BadRequest.newBuilder()
                        .addFieldViolations(
                            BadRequest.FieldViolation.newBuilder()
                                .setField("checks[2].params.pattern")
                                .setDescription("unbalanced parenthesis"))
                        .addFieldViolations(
                            BadRequest.FieldViolation.newBuilder()
                                .setField("compact[0]")
                                .setDescription("unknown check"))
                        .build()))
            .build();
    ScorewireException e = ScorewireException.from(StatusProto.toStatusRuntimeException(rich));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertEquals("bad", e.description());
    assertEquals(
        List.of(
            new FieldViolation("checks[2].params.pattern", "unbalanced parenthesis"),
            new FieldViolation("compact[0]", "unknown check")),
        e.fieldViolations());
  }

  @Test
  void aStatusWithoutDetailsHasNoViolations() {
    ScorewireException e =
        ScorewireException.from(Status.DEADLINE_EXCEEDED.withDescription("late").asRuntimeException());
    assertEquals(Status.Code.DEADLINE_EXCEEDED, e.code());
    assertEquals(List.of(), e.fieldViolations());
  }

  @Test
  void aNonGrpcErrorIsUnknown() {
    assertEquals(Status.Code.UNKNOWN, ScorewireException.from(new IllegalStateException("x")).code());
  }

  @Test
  void hostPortTargetsResolveThroughDnsSchemesAreKept() {
    String[][] rows = {
      {"127.0.0.1:50051", "dns:///127.0.0.1:50051"},
      {"localhost:50051", "dns:///localhost:50051"},
      {"[::1]:50051", "dns:///[::1]:50051"},
      {"dns:///scorewire:50051", "dns:///scorewire:50051"},
      {"unix:/tmp/scorewire.sock", "unix:/tmp/scorewire.sock"},
    };
    for (String[] row : rows) {
      assertEquals(row[1], ScorewireClient.normalizeTarget(row[0]), row[0]);
    }
  }
}
