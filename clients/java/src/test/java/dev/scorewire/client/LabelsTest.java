package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.scorewire.v1.Label;
import dev.scorewire.v1.ListLabelsRequest;
import dev.scorewire.v1.ListLabelsResponse;
import dev.scorewire.v1.PutLabelsRequest;
import dev.scorewire.v1.PutLabelsResponse;
import io.grpc.Status;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The Java client's LabelService calls against a real scorewire server. */
class LabelsTest extends LiveServerTest {
  /** A sample id no other test or run uses. */
  private static String freshSample() {
    return "java-labels-" + UUID.randomUUID();
  }

  private static Label label(String sampleId, String output) {
    return Label.newBuilder()
        .setSampleId(sampleId)
        .setOutputHash(ScorewireClient.outputHash(output))
        .setPassed(true)
        .setLabeller("ann")
        .build();
  }

  @Test
  void outputHashIsSha256OfTheExactUtf8Bytes() {
    assertEquals(
        "5dd272b4f316b776a7b8e3d0894b37e1e42be3d5d3b204b8a5836cc50597a6b1",
        ScorewireClient.outputHash("Paris"));
    assertEquals(
        "4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c",
        ScorewireClient.outputHash("é"));
  }

  @Test
  void keepaliveIsThirtySecondsAsInEveryClientAndPutLabelsIsRetried() {
    assertEquals(30, ScorewireClient.DEFAULT_KEEPALIVE_TIME.toSeconds());
    @SuppressWarnings("unchecked")
    Map<String, ?> method = ((List<Map<String, ?>>) ScorewireClient.serviceConfig().get("methodConfig")).get(0);
    assertEquals(List.of(Map.of("service", "scorewire.v1.LabelService", "method", "PutLabels")), method.get("name"));
    assertEquals(List.of("UNAVAILABLE"), ((Map<?, ?>) method.get("retryPolicy")).get("retryableStatusCodes"));
  }

  @Test
  void putThenListReturnsTheLabelAsStored() {
    String sample = freshSample();
    PutLabelsResponse put = client.putLabels(PutLabelsRequest.newBuilder().addLabels(label(sample, "Paris")).build());
    assertEquals(1, put.getLabelsCount());
    assertEquals("default", put.getLabels(0).getCheck()); // filled in by the server
    assertTrue(put.getLabels(0).hasCreatedAt());
    ListLabelsResponse page = client.listLabels(ListLabelsRequest.newBuilder().setSampleId(sample).build());
    assertEquals(1, page.getLabelsCount());
    assertEquals(ScorewireClient.outputHash("Paris"), page.getLabels(0).getOutputHash());
    assertEquals("", page.getNextPageToken());
  }

  @Test
  void aFreshRequestIdPerCallAndTheSameIdTwiceStoresOnce() {
    String sample = freshSample();
    PutLabelsRequest request = PutLabelsRequest.newBuilder().addLabels(label(sample, "Paris")).build();
    client.putLabels(request);
    client.putLabels(request); // no request id: a fresh one, so a second label
    PutLabelsRequest retried = request.toBuilder().setRequestId(UUID.randomUUID().toString()).build();
    client.putLabels(retried);
    client.putLabels(retried); // the same id: nothing new
    ListLabelsResponse history =
        client.listLabels(ListLabelsRequest.newBuilder().setSampleId(sample).setIncludeHistory(true).build());
    assertEquals(3, history.getLabelsCount());
  }

  @Test
  void listLabelsPagesWithNextPageToken() {
    String sample = freshSample();
    client.putLabels(
        PutLabelsRequest.newBuilder()
            .addLabels(label(sample, "a"))
            .addLabels(label(sample, "b"))
            .addLabels(label(sample, "c"))
            .build());
    ListLabelsRequest first = ListLabelsRequest.newBuilder().setSampleId(sample).setPageSize(2).build();
    ListLabelsResponse page1 = client.listLabels(first);
    assertEquals(2, page1.getLabelsCount());
    assertNotEquals("", page1.getNextPageToken());
    ListLabelsResponse page2 = client.listLabels(first.toBuilder().setPageToken(page1.getNextPageToken()).build());
    assertEquals(1, page2.getLabelsCount());
    assertEquals("", page2.getNextPageToken());
  }

  @Test
  void aBadOutputHashIsInvalidArgumentNamingTheField() {
    Label bad = label(freshSample(), "x").toBuilder().setOutputHash("nothex").build();
    ScorewireException e =
        assertThrows(
            ScorewireException.class,
            () -> client.putLabels(PutLabelsRequest.newBuilder().addLabels(bad).build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertFalse(e.fieldViolations().isEmpty());
    assertTrue(
        e.fieldViolations().stream().anyMatch(v -> v.field().equals("labels[0].output_hash")),
        e.fieldViolations().toString());
  }
}
