package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.scorewire.v1.Case;
import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.CheckSpec;
import dev.scorewire.v1.Output;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSummary;
import dev.scorewire.v1.Sample;
import dev.scorewire.v1.Score;
import dev.scorewire.v1.ScoreRequest;
import dev.scorewire.v1.ScoreResponse;
import dev.scorewire.v1.ScoreStreamResponse;
import dev.scorewire.v1.StreamCase;
import dev.scorewire.v1.StreamConfig;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Java client against a real scorewire server (see {@link TestServer}). */
@Timeout(120)
class ScorewireClientTest {
  private static TestServer server;
  private static ScorewireClient client;

  @BeforeAll
  static void startServer() throws Exception {
    server = TestServer.start();
    client = ScorewireClient.newBuilder(server.address).build();
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  /** {@code n} cases whose outputs mention Northstar exactly when the index is even. */
  private static List<Case> cases(int n) {
    List<Case> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      String text = i % 2 == 0 ? "Answer " + i + ": Northstar ships it." : "Answer " + i + ": nobody does.";
      out.add(
          Case.newBuilder()
              .setSample(Sample.newBuilder().setId("case-" + i))
              .setOutput(Output.newBuilder().setText(text))
              .build());
    }
    return out;
  }

  private static CheckSpec check(String type, String param, double value) {
    Struct params =
        Struct.newBuilder().putFields(param, Value.newBuilder().setNumberValue(value).build()).build();
    return CheckSpec.newBuilder().setType(type).setParams(params).build();
  }

  @Test
  void scoreReturnsOneScorePerCheckStructuredFirstThenCompact() {
    ScoreResponse response =
        client.score(
            ScoreRequest.newBuilder()
                .setSample(
                    Sample.newBuilder()
                        .setId("s1")
                        .setExpected(Value.newBuilder().setStringValue("Northstar")))
                .setOutput(Output.newBuilder().setText("Northstar ships it."))
                .addChecks(check("output_length", "maximum", 200))
                .addCompact("contains:Northstar")
                .addCompact("contains:Southstar")
                .build());
    List<String> names = response.getScoresList().stream().map(Score::getName).toList();
    assertEquals(List.of("output_length", "contains:Northstar", "contains:Southstar"), names);
    List<Boolean> passed = response.getScoresList().stream().map(Score::getPassed).toList();
    assertEquals(List.of(true, true, false), passed);
    for (Score s : response.getScoresList()) {
      assertFalse(s.hasError(), s.getReason());
    }
    assertEquals(1.0, response.getScores(1).getValue());
    assertEquals(0.0, response.getScores(2).getValue());
    // One failing check fails the response.
    assertFalse(response.getPassed());
  }

  @Test
  void invalidArgumentCarriesTheBadRequestFieldViolations() {
    ScoreRequest request =
        ScoreRequest.newBuilder()
            .setOutput(Output.newBuilder().setText("anything"))
            .addChecks(check("output_length", "maximum", 10))
            .addChecks(CheckSpec.newBuilder().setType("no_such_check"))
            .build();
    ScorewireException e = assertThrows(ScorewireException.class, () -> client.score(request));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code(), e.getMessage());
    // The second check's type is the offending field; the first check is fine.
    assertTrue(
        e.fieldViolations().stream()
            .anyMatch(v -> v.field().equals("checks[1].type") && !v.description().isEmpty()),
        e.fieldViolations().toString());
    assertTrue(e.fieldViolations().stream().noneMatch(v -> v.field().startsWith("checks[0]")));
  }

  @Test
  void aDeadlineThatExpiresFailsWithDeadlineExceeded() {
    // 20,000 cases cannot be scored and streamed back within 50 ms.
    RunSuiteRequest request =
        RunSuiteRequest.newBuilder()
            .addCompact("contains:Northstar")
            .addCompact("length:1..500")
            .addCompact("regex:^Answer [0-9]+")
            .addAllCases(cases(20_000))
            .build();
    try (SuiteRun run = client.runSuite(request, Duration.ofMillis(50))) {
      ScorewireException e = assertThrows(ScorewireException.class, run::summary);
      assertEquals(Status.Code.DEADLINE_EXCEEDED, e.code(), e.getMessage());
    }
  }

  @Test
  void runSuiteOfAThousandCasesYieldsEveryResultOnceAndAMatchingSummary() {
    RunSuiteRequest request =
        RunSuiteRequest.newBuilder().addCompact("contains:Northstar").addAllCases(cases(1000)).build();
    Map<Integer, CaseResult> seen = new HashMap<>();
    try (SuiteRun run = client.runSuite(request)) {
      for (CaseResult result : run) {
        assertNull(seen.put(result.getIndex(), result), "case " + result.getIndex() + " arrived twice");
        assertEquals("case-" + result.getIndex(), result.getSampleId());
        assertEquals(1, result.getScoresCount());
        assertEquals(result.getIndex() % 2 == 0, result.getPassed(), "case " + result.getIndex());
      }
      assertEquals(
          IntStream.range(0, 1000).boxed().toList(), new ArrayList<>(new TreeSet<>(seen.keySet())));
      RunSummary summary = run.summary();
      assertEquals(1000, summary.getCases());
      assertEquals(500, summary.getCasesPassed());
      assertEquals(500, summary.getPassed());
      assertEquals(500, summary.getFailed());
      assertEquals(0, summary.getErrored());
      assertEquals(0.5, summary.getPassRate());
      assertEquals(0.5, summary.getMeanScore());
      assertEquals(0.0, summary.getErrorRate());
      assertTrue(summary.getGatePassed(), summary.getGateReasonsList().toString());
      assertEquals(1, summary.getChecksCount());
      assertEquals("contains:Northstar", summary.getChecks(0).getName());
      assertEquals(500, summary.getChecks(0).getPassed());
      assertEquals(500, summary.getChecks(0).getFailed());
      assertEquals(0, summary.getChecks(0).getErrored());
    }
  }

  @Test
  void closingARunEarlyCancelsIt() {
    RunSuiteRequest request =
        RunSuiteRequest.newBuilder().addCompact("contains:Northstar").addAllCases(cases(1000)).build();
    SuiteRun run = client.runSuite(request);
    run.next();
    run.close();
    ScorewireException e = assertThrows(ScorewireException.class, run::summary);
    assertEquals(Status.Code.CANCELLED, e.code(), e.getMessage());
  }

  @Test
  void aBadSuiteFailsTheRunWithInvalidArgumentAndTheFieldPath() {
    RunSuiteRequest request =
        RunSuiteRequest.newBuilder()
            .addChecks(check("output_length", "max_wrds", 3))
            .addAllCases(cases(3))
            .build();
    try (SuiteRun run = client.runSuite(request)) {
      ScorewireException e = assertThrows(ScorewireException.class, run::hasNext);
      assertEquals(Status.Code.INVALID_ARGUMENT, e.code(), e.getMessage());
      assertTrue(
          e.fieldViolations().stream().anyMatch(v -> v.field().equals("checks[0].params.max_wrds")),
          e.fieldViolations().toString());
      // The summary reports the same failure.
      assertEquals(e, assertThrows(ScorewireException.class, run::summary));
    }
  }

  @Test
  @org.junit.jupiter.api.Timeout(60) // a flow-control bug would stall the stream, not fail it
  void scoreStreamAnswersEveryCaseOnceUnderItsRequestId() {
    Map<String, Boolean> passedById = new HashMap<>();
    try (ScoreStream stream =
        client.scoreStream(StreamConfig.newBuilder().addCompact("contains:Northstar").build())) {
      // More cases than the flow-control window: reading must keep asking for more.
      int n = ScoreStream.WINDOW * 3;
      List<Case> sent = cases(n);
      for (int i = 0; i < sent.size(); i++) {
        stream.send(
            StreamCase.newBuilder()
                .setRequestId("r" + i)
                .setSample(sent.get(i).getSample())
                .setOutput(sent.get(i).getOutput())
                .build());
      }
      stream.complete();
      for (ScoreStreamResponse response : stream) {
        assertNull(
            passedById.put(response.getRequestId(), response.getPassed()),
            response.getRequestId() + " answered twice");
        assertEquals(1, response.getScoresCount());
      }
    }
    Map<String, Boolean> expected = new HashMap<>();
    for (int i = 0; i < ScoreStream.WINDOW * 3; i++) {
      expected.put("r" + i, i % 2 == 0);
    }
    assertEquals(expected, passedById);
  }
}
