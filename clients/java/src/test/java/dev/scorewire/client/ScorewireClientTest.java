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
import org.junit.jupiter.api.Test;

/** The Java client against a real scorewire server (see {@link TestServer}). */
class ScorewireClientTest extends LiveServerTest {
  /** {@code n} cases whose outputs mention Northstar exactly when the index is even. */
  static List<Case> cases(int n) {
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

  /** The peers' shapes and edges as plain Java values: {input, expected, text, value}. */
  private static List<Object[]> plainCases() {
    Map<String, Object> order = new java.util.LinkedHashMap<>();
    order.put("order_id", 7);
    order.put("items", List.of(Map.of("sku", "SKU-1", "qty", 2)));
    return List.of(
        new Object[] {Map.of("q", "x"), Map.of("answer", "Paris", "must_include", List.of("paris")), "Paris", null},
        new Object[] {null, Map.of("answer", order, "must_include", List.of("order")), "{\"order_id\": 7}", null},
        new Object[] {"q", Map.of("answer", "no", "must_include", List.of("absent")), "the order ships", null},
        new Object[] {List.of(1, "two"), Map.of("answer", 2.5), "", Map.of("steps", List.of(Map.of("tool", "a")))},
        new Object[] {null, null, "text", null}, // no reference: an error in both forms
        new Object[] {
          "é ✓ 東京", Map.of("answer", "é ✓ 東京", "must_include", List.of("東京")), "é ✓ 東京", null
        });
  }

  private static Case plainCase(int i, Object[] c, boolean asJson) {
    Sample.Builder sample = Sample.newBuilder().setId("s" + i);
    Output.Builder output = Output.newBuilder().setText((String) c[2]);
    if (asJson) {
      if (c[0] != null) sample.setInputJson(Values.json(c[0]));
      if (c[1] != null) sample.setExpectedJson(Values.json(c[1]));
      if (c[3] != null) output.setValueJson(Values.json(c[3]));
    } else {
      if (c[0] != null) sample.setInput(Values.value(c[0]));
      if (c[1] != null) sample.setExpected(Values.value(c[1]));
      if (c[3] != null) output.setValue(Values.value(c[3]));
    }
    return Case.newBuilder().setSample(sample).setOutput(output).build();
  }

  /** Each result's (value, passed, error code) per check, by sample id. */
  private static Map<String, List<String>> verdicts(boolean asJson) {
    List<Object[]> plain = plainCases();
    RunSuiteRequest.Builder request =
        RunSuiteRequest.newBuilder()
            .addChecks(Values.check("contains", Map.of("path", "must_include", "case_sensitive", false)))
            .addChecks(Values.check("exact", Map.of("path", "answer")))
            .addChecks(
                Values.check(
                    "json_schema",
                    Map.of("schema", Map.of("type", "object", "required", List.of("order_id")))))
            .addChecks(Values.check("trajectory.max_steps", Map.of("n", 1)));
    for (int i = 0; i < plain.size(); i++) {
      request.addCases(plainCase(i, plain.get(i), asJson));
    }
    Map<String, List<String>> out = new HashMap<>();
    try (SuiteRun run = client.runSuite(request.build())) {
      for (CaseResult r : run) {
        out.put(
            r.getSampleId(),
            r.getScoresList().stream()
                .map(s -> s.getValue() + "/" + s.getPassed() + "/" + s.getError().getCode())
                .toList());
      }
      assertEquals(plain.size(), run.summary().getCases());
    }
    return out;
  }

  @Test
  void jsonTextFieldsScoreLikeValues() {
    // The same plain values sent as Values and as JSON text give the same verdicts.
    Map<String, List<String>> byValue = verdicts(false);
    Map<String, List<String>> byJson = verdicts(true);
    assertEquals(plainCases().size(), byJson.size());
    assertEquals(byValue, byJson);
    // Not vacuous: the cases pass, fail and error (the case without a reference).
    String all = byJson.values().toString();
    assertTrue(all.contains("/true/") && all.contains("/false/"), all);
    assertTrue(byJson.get("s4").stream().anyMatch(v -> !v.endsWith("/")), byJson.get("s4").toString());
  }

  private static boolean exactAgainst(Sample sample, String text) {
    return client
        .score(
            ScoreRequest.newBuilder()
                .setSample(sample)
                .setOutput(Values.text(text))
                .addChecks(Values.check("exact", Map.of("path", "n")))
                .build())
        .getPassed();
  }

  @Test
  void anIntegerPast2To53KeepsEveryDigitAsJsonText() {
    // 2^53 + 1 as a Long in JSON text equals its digits and not 2^53.
    Sample sample = Sample.newBuilder().setExpectedJson(Values.json(Map.of("n", (1L << 53) + 1))).build();
    assertTrue(exactAgainst(sample, "9007199254740993"));
    assertFalse(exactAgainst(sample, "9007199254740992"));
  }

  @Test
  void bothFormsOfAFieldAreInvalidArgumentNamingTheJsonField() {
    // expected and expected_json together: which one counts is not guessed.
    Sample sample =
        Sample.newBuilder()
            .setExpected(Values.value(Map.of("n", 1)))
            .setExpectedJson(Values.json(Map.of("n", 1)))
            .build();
    ScorewireException e = assertThrows(ScorewireException.class, () -> exactAgainst(sample, "1"));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code(), e.getMessage());
    assertTrue(
        e.fieldViolations().stream().anyMatch(v -> v.field().equals("sample.expected_json")),
        e.fieldViolations().toString());
  }
}
