package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.scorewire.v1.Case;
import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.CheckSpec;
import dev.scorewire.v1.CheckSummary;
import dev.scorewire.v1.Gate;
import dev.scorewire.v1.Run;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSummary;
import dev.scorewire.v1.Sample;
import dev.scorewire.v1.Score;
import dev.scorewire.v1.SuiteFormat;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@link ScorewireClient#runSuiteSharded} against a real server: the merged summary of a
 * sharded run equals the summary of the same batch run as one call (counts exactly, means
 * to rounding), its gate judged again on the merged totals; indexes refer to the request.
 * A run of one chunk is the server's summary unchanged: its run_id, verdict and matrix.
 */
class ShardsTest extends LiveServerTest {
  /** Passing, failing, erroring (no expected value) and skipped scores, unevenly spread. */
  static List<Case> mixedCases(int n) {
    List<Case> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Sample.Builder s = Sample.newBuilder().setId("c" + i);
      int k = i % 7;
      String text;
      if (k <= 2) {
        s.setExpected(Values.value("Paris is the capital"));
        text = k == 0 ? "Paris is the capital" : "Paris is a city in France";
      } else if (k <= 4) {
        s.setExpected(Values.value("Rome"));
        text = k == 3 ? "Roma" : "Rome";
      } else {
        text = "no expected value here"; // `exact` and `rouge_l` error
      }
      out.add(Case.newBuilder().setSample(s).setOutput(Values.text(text)).build());
    }
    return out;
  }

  static RunSuiteRequest mixedRequest(Gate gate) {
    CheckSpec roman =
        Values.check("contains", Map.of("needles", List.of("Rome"))).toBuilder()
            .setName("roman")
            .setWhen(Values.check("contains", Map.of("needles", List.of("Rom"))))
            .build();
    RunSuiteRequest.Builder r =
        RunSuiteRequest.newBuilder()
            .addChecks(CheckSpec.newBuilder().setType("exact").setName("same"))
            .addChecks(CheckSpec.newBuilder().setType("rouge_l").setName("overlap"))
            .addChecks(roman)
            .addAllCases(mixedCases(97));
    return gate == null ? r.build() : r.setGate(gate).build();
  }

  private static void assertNear(double want, double got, String what) {
    assertEquals(want, got, 1e-12 * Math.max(1, Math.abs(want)), what);
  }

  private static List<Long> counts(RunSummary s) {
    List<Long> out =
        new ArrayList<>(List.of(s.getCases(), s.getCasesPassed(), s.getPassed(), s.getFailed(), s.getErrored(), s.getSkipped()));
    for (CheckSummary c : s.getChecksList()) {
      out.addAll(List.of(c.getPassed(), c.getFailed(), c.getErrored(), c.getSkipped(), c.getCached()));
    }
    return out;
  }

  @Test
  void aShardedSummaryIsTheUnshardedOne() {
    List<Gate> gates =
        List.of(
            Gate.newBuilder().setMaxErrorRate(0.5).build(), // passes
            Gate.newBuilder().setMaxErrorRate(0.5).setMinPassRate(0.3).build(), // fails: 28 of 97 pass
            Gate.newBuilder().setMaxErrorRate(1).setMinMeanScore(0.4).setMaxCostUsd(1).build());
    List<ShardOptions> options =
        List.of(ShardOptions.of(1), ShardOptions.of(3).withChunkCases(10), ShardOptions.of(4).withChunkCases(1));
    for (Gate gate : gates) {
      List<CaseResult> whole;
      RunSummary one;
      try (SuiteRun run = client.runSuite(mixedRequest(gate))) {
        whole = run.remaining();
        one = run.summary();
      }
      Map<Integer, CaseResult> byIndex = new HashMap<>();
      whole.forEach(r -> byIndex.put(r.getIndex(), r));
      for (ShardOptions opts : options) {
        String name = "gate " + gate + " shards " + opts.shards() + " chunk " + opts.chunkCases();
        List<List<CaseResult>> chunks = new CopyOnWriteArrayList<>();
        ShardedResult got = client.runSuiteSharded(mixedRequest(gate), opts.withOnChunk(chunks::add));
        RunSummary m = got.summary();
        assertEquals(counts(one), counts(m), name);
        assertNear(one.getPassRate(), m.getPassRate(), name);
        assertNear(one.getMeanScore(), m.getMeanScore(), name);
        assertNear(one.getErrorRate(), m.getErrorRate(), name);
        assertNear(one.getValueSum(), m.getValueSum(), name);
        for (int i = 0; i < m.getChecksCount(); i++) {
          assertNear(one.getChecks(i).getMeanValue(), m.getChecks(i).getMeanValue(), name + " " + m.getChecks(i).getName());
        }
        assertEquals(one.getGatePassed(), m.getGatePassed(), name);
        assertEquals(one.getGateReasonsList(), m.getGateReasonsList(), name);
        assertEquals(one.getGate(), m.getGate(), name);
        // Each case once, named by its index in the request, scored as in the whole run.
        assertEquals(IntStream.range(0, 97).boxed().toList(), got.results().stream().map(CaseResult::getIndex).sorted().toList(), name);
        for (CaseResult r : got.results()) {
          assertEquals("c" + r.getIndex(), r.getSampleId(), name);
          assertEquals(
              byIndex.get(r.getIndex()).getScoresList().stream().map(Score::getValue).toList(),
              r.getScoresList().stream().map(Score::getValue).toList(),
              name + " case " + r.getIndex());
        }
        assertEquals(got.results(), chunks.stream().flatMap(List::stream).toList(), name);
        assertEquals(0, got.retries(), name);
      }
    }
  }

  @Test
  void theGateIsJudgedOnTheMergedTotalsNotPerShard() {
    // The first half passes, the second fails: each shard's own verdict is wrong for the
    // batch; the merged summary's is the batch's (pass rate exactly 0.5).
    List<Case> cases = withOutputs(20, i -> i < 10 ? "Paris" : "Rome");
    RunSuiteRequest.Builder request = RunSuiteRequest.newBuilder().addCompact("contains:Paris").addAllCases(cases);
    ShardOptions halves = ShardOptions.of(2).withChunkCases(10);
    RunSummary merged =
        client.runSuiteSharded(request.setGate(Gate.newBuilder().setMinPassRate(0.5)).build(), halves).summary();
    assertEquals(0.5, merged.getPassRate());
    assertTrue(merged.getGatePassed());
    List<RunSummary> parts = new ArrayList<>();
    for (List<Case> half : List.of(cases.subList(0, 10), cases.subList(10, 20))) {
      try (SuiteRun run = client.runSuite(request.clearCases().addAllCases(half).build())) {
        parts.add(run.summary());
      }
    }
    assertEquals(List.of(true, false), parts.stream().map(RunSummary::getGatePassed).toList());
    assertEquals(merged, Summaries.merge(parts));
    RunSummary strict =
        client
            .runSuiteSharded(request.clearCases().addAllCases(cases).setGate(Gate.newBuilder().setMinPassRate(0.6)).build(), halves)
            .summary();
    assertEquals(List.of("pass rate 0.5 is below min_pass_rate 0.6"), strict.getGateReasonsList());
    assertFalse(strict.getGatePassed());
  }

  @Test
  void gateReasonsAreTheServersSentenceForSentence() {
    // Thresholds of more than 6 significant digits, a cost, an error rate, no cases:
    // every sentence as the server wrote it.
    List<Case> cases = withOutputs(7, i -> i < 3 ? "Paris" : "Rome");
    Gate gate =
        Gate.newBuilder().setMinPassRate(0.987654321).setMinMeanScore(0.5000001).setMaxCostUsd(1e-7).build();
    for (List<Case> batch : List.of(cases, List.<Case>of())) {
      RunSuiteRequest request =
          RunSuiteRequest.newBuilder()
              .addCompact("contains:Paris")
              .addChecks(CheckSpec.newBuilder().setType("exact"))
              .setGate(gate)
              .addAllCases(batch)
              .build();
      RunSummary one;
      try (SuiteRun run = client.runSuite(request)) {
        one = run.summary();
      }
      assertFalse(one.getGateReasonsList().isEmpty());
      assertEquals(one.getGateReasonsList(), Summaries.gateReasons(one.getGate(), one));
      assertEquals(one.getGateReasonsList(), Summaries.merge(List.of(one)).getGateReasonsList());
    }
    // Nothing ran, so nothing met a min_* threshold, not even 0.
    RunSummary empty;
    try (SuiteRun run =
        client.runSuite(
            RunSuiteRequest.newBuilder()
                .addCompact("contains:x")
                .setGate(Gate.newBuilder().setMinPassRate(0).setMinMeanScore(0))
                .build())) {
      empty = run.summary();
    }
    assertEquals(2, empty.getGateReasonsCount());
    assertEquals(empty.getGateReasonsList(), Summaries.merge(List.of(empty)).getGateReasonsList());
    assertFalse(Summaries.merge(List.of(empty)).getGatePassed());
  }

  @Test
  void aSuiteWithItsOwnCasesRunsAsOneChunk() {
    String suite =
        "checks:\n  short: {type: length, max_chars: 9}\n"
            + "datasets:\n  d:\n    cases:\n"
            + "      - {id: a, output: tiny}\n      - {id: b, output: far too long}\n"
            + "suites:\n  s: {dataset: d, checks: [short]}\n";
    List<List<CaseResult>> chunks = new CopyOnWriteArrayList<>();
    ShardedResult got =
        client.runSuiteSharded(
            RunSuiteRequest.newBuilder().setSuiteYaml(suite).build(), ShardOptions.of(3).withOnChunk(chunks::add));
    assertEquals(1, chunks.size());
    assertEquals(2, got.summary().getCases());
    assertEquals(
        List.of(true, false),
        got.results().stream().sorted((a, b) -> a.getIndex() - b.getIndex()).map(CaseResult::getPassed).toList());
  }

  /** A recorded RunSuite of {@code cases} named {@code name}, contains:Paris. */
  private static RunSuiteRequest.Builder recorded(String name, List<Case> cases) {
    return RunSuiteRequest.newBuilder().addCompact("contains:Paris").addAllCases(cases).setRecord(true).setRunName(name);
  }

  private static List<Case> paris(String... outputs) {
    return withOutputs(outputs.length, i -> outputs[i]);
  }

  /** {@code n} cases {@code c0}.., case {@code i} with the output text {@code output(i)}. */
  private static List<Case> withOutputs(int n, IntFunction<String> output) {
    return IntStream.range(0, n)
        .mapToObj(i -> Case.newBuilder().setSample(Sample.newBuilder().setId("c" + i)).setOutput(Values.text(output.apply(i))).build())
        .toList();
  }

  @Test
  void aRecordedRunOfOneChunkKeepsTheServersRunIdAndVerdict() {
    String name = "java-shard-" + UUID.randomUUID();
    // Cases that fit one chunk: the sharded run is one recorded run, and its id comes back.
    ShardedResult got = client.runSuiteSharded(recorded(name, paris("Paris", "Paris")).build(), ShardOptions.of(1));
    String runId = got.summary().getRunId();
    assertFalse(runId.isEmpty(), "the recorded run's id was lost");
    assertEquals(runId, client.getRun(runId).getRunId());
    // Against that run as baseline, c1 regresses: the server fails the gate, which the
    // client's rule (no baseline, nothing errored) would pass; one chunk keeps the verdict.
    RunSummary worse =
        client
            .runSuiteSharded(
                recorded(name, paris("Paris", "Berlin")).setGate(Gate.newBuilder().setBaseline(runId)).build(),
                ShardOptions.of(1))
            .summary();
    assertFalse(worse.getGatePassed(), "the server's baseline verdict was judged again");
    assertFalse(worse.getGateReasonsList().isEmpty());
    assertEquals(List.of(), Summaries.gateReasons(worse.getGate(), worse));
    assertFalse(worse.getRunId().isEmpty());
    // Several chunks are several recorded runs: the merged summary names none of them.
    RunSummary split = client.runSuiteSharded(recorded(name, paris("Paris", "Paris")).build(), ShardOptions.of(2)).summary();
    assertEquals(2, split.getCases());
    assertEquals("", split.getRunId());
  }

  @Test
  void aRecordedShardedRunNamesEachChunksRunInCaseOrder() {
    String name = "java-shard-ids-" + UUID.randomUUID();
    // Chunks of 3 over 3 shards whose runs differ: all pass, all fail, one of 3 passes.
    List<Case> cases =
        paris("Paris", "Paris", "Paris", "Rome", "Rome", "Rome", "Paris", "Rome", "Berlin");
    ShardOptions threes = ShardOptions.of(3).withChunkCases(3);
    List<String> made = new ArrayList<>();
    try {
      ShardedResult got = client.runSuiteSharded(recorded(name, cases).build(), threes);
      made.addAll(got.runIds());
      assertEquals("", got.summary().getRunId());
      assertEquals(3, got.runIds().size(), "one run id per recorded chunk: " + got.runIds());
      assertEquals(3, Set.copyOf(got.runIds()).size(), "distinct run ids: " + got.runIds());
      got.runIds().forEach(id -> assertFalse(id.isEmpty(), "an empty run id"));
      // In the order of the chunks' cases, whichever chunk finished first.
      List<Long> passed = new ArrayList<>();
      for (String id : got.runIds()) {
        Run run = client.getRun(id);
        assertEquals(id, run.getRunId());
        assertEquals(3, run.getSummary().getCases(), id);
        assertEquals(3, run.getResults(), id);
        passed.add(run.getSummary().getCasesPassed());
      }
      assertEquals(List.of(3L, 0L, 1L), passed);

      // Not recorded: no run ids.
      ShardedResult plain = client.runSuiteSharded(recorded(name, cases).setRecord(false).build(), threes);
      assertEquals(9, plain.summary().getCases());
      assertEquals(List.of(), plain.runIds());

      // One recorded chunk: exactly its summary's run id.
      ShardedResult one = client.runSuiteSharded(recorded(name, cases).build(), ShardOptions.of(1));
      made.addAll(one.runIds());
      assertFalse(one.summary().getRunId().isEmpty());
      assertEquals(List.of(one.summary().getRunId()), one.runIds());
      assertEquals(9, client.getRun(one.summary().getRunId()).getSummary().getCases());
    } finally {
      for (String id : made) {
        client.deleteRun(id);
      }
    }
  }

  @Test
  void aCheckllmSuiteOfOneChunkKeepsItsMatrix() {
    // Outputs recorded in the document: a "recorded" cell of the matrix, generation off.
    String suite =
        "tests:\n"
            + "  - {output: Paris, assert: [{type: contains, value: Paris}]}\n"
            + "  - {output: Lyon, assert: [{type: contains, value: Paris}]}\n";
    RunSuiteRequest request = RunSuiteRequest.newBuilder().setSuiteYaml(suite).build();
    RunSummary one;
    try (SuiteRun run = client.runSuite(request)) {
      run.remaining();
      one = run.summary();
    }
    assertEquals(1, one.getMatrixCount());
    RunSummary got = client.runSuiteSharded(request, ShardOptions.of(3)).summary();
    assertEquals(one.getMatrixList(), got.getMatrixList());
    assertEquals(one, got);
  }

  /** Seed 001's format: 2 tests x 2 prompts x 2 providers, outputs sent as cases. */
  static final String CHECKLLM_SUITE =
      "prompts: [\"Answer: {{query}}\", \"Be brief. {{query}}\"]\n"
          + "providers: [\"openai:gpt-4o-mini\", \"anthropic:claude-3-5-haiku\"]\n"
          + "tests:\n"
          + "  - {description: France, vars: {query: \"Capital of France?\"}, assert: [{type: contains, value: Paris}]}\n"
          + "  - {description: Italy, vars: {query: \"Capital of Italy?\"}, assert: [{type: contains, value: Rome}]}\n";

  /** Every combination of CHECKLLM_SUITE recorded; the anthropic answers to prompt 1 are wrong. */
  static List<Case> checkllmRecorded() {
    List<Case> out = new ArrayList<>();
    for (String test : List.of("France", "1")) {
      for (String prompt : List.of("0", "1")) {
        for (String provider : List.of("openai:gpt-4o-mini", "anthropic:claude-3-5-haiku")) {
          String text = prompt.equals("1") && provider.startsWith("anthropic") ? "no idea" : "Paris, Rome";
          out.add(Case.newBuilder().setTest(test).setPrompt(prompt).setProvider(provider).setOutput(Values.text(text)).build());
        }
      }
    }
    return out;
  }

  @Test
  void aRecordedCheckllmBatchRunsWholeAndKeepsItsSummary() {
    // The server refuses a checkllm batch lacking any combination: split over 3 shards,
    // every chunk would be INVALID_ARGUMENT. Sent whole, it is the plain run's summary.
    for (SuiteFormat format : List.of(SuiteFormat.SUITE_FORMAT_UNSPECIFIED, SuiteFormat.SUITE_FORMAT_CHECKLLM)) {
      RunSuiteRequest request =
          RunSuiteRequest.newBuilder().setSuiteYaml(CHECKLLM_SUITE).setFormat(format).addAllCases(checkllmRecorded()).build();
      RunSummary one;
      try (SuiteRun run = client.runSuite(request)) {
        run.remaining();
        one = run.summary();
      }
      assertEquals(8, one.getCases(), format.toString());
      assertEquals(4, one.getMatrixCount(), format.toString());
      List<List<CaseResult>> chunks = new CopyOnWriteArrayList<>();
      ShardedResult got = client.runSuiteSharded(request, ShardOptions.of(3).withOnChunk(chunks::add));
      assertEquals(1, chunks.size(), format.toString());
      assertEquals(IntStream.range(0, 8).boxed().toList(), got.results().stream().map(CaseResult::getIndex).sorted().toList());
      assertEquals(one.getMatrixList(), got.summary().getMatrixList(), format.toString());
      assertEquals(one, got.summary(), format.toString());
    }
  }

  @Test
  void chunksOverStreamChunkCasesAreRunSuiteStreamsAndCountTheSame() {
    // Chunks of 750 cases: each is a RunSuiteStream.
    RunSuiteRequest request = mixedRequest(null).toBuilder().clearCases().addAllCases(mixedCases(1500)).build();
    ShardedResult got = client.runSuiteSharded(request, ShardOptions.of(2));
    RunSummary one;
    try (SuiteRun run = client.runSuite(request)) {
      one = run.summary();
    }
    assertEquals(counts(one), counts(got.summary()));
    assertEquals(IntStream.range(0, 1500).boxed().toList(), got.results().stream().map(CaseResult::getIndex).sorted().toList());
  }

  @Test
  void anInvalidRequestFailsTheShardedRun() {
    RunSuiteRequest request =
        RunSuiteRequest.newBuilder()
            .addChecks(Values.check("output_length", Map.of("maximun", 5)))
            .addAllCases(mixedCases(20))
            .build();
    ScorewireException e =
        assertThrows(ScorewireException.class, () -> client.runSuiteSharded(request, ShardOptions.of(3)));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertFalse(e.retryable());
  }
}
