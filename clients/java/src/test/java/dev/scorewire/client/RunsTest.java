package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.scorewire.v1.Case;
import dev.scorewire.v1.CloseRunRequest;
import dev.scorewire.v1.CompareRunsResponse;
import dev.scorewire.v1.Gate;
import dev.scorewire.v1.ListRunResultsRequest;
import dev.scorewire.v1.ListRunResultsResponse;
import dev.scorewire.v1.ListRunsRequest;
import dev.scorewire.v1.ListRunsResponse;
import dev.scorewire.v1.OpenRunRequest;
import dev.scorewire.v1.Outcome;
import dev.scorewire.v1.Run;
import dev.scorewire.v1.RunPart;
import dev.scorewire.v1.RunStatus;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSummary;
import dev.scorewire.v1.Sample;
import dev.scorewire.v1.ScoreStreamResponse;
import dev.scorewire.v1.StreamCase;
import dev.scorewire.v1.StreamConfig;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The Java client's RunService calls against a real scorewire server that records runs. */
class RunsTest extends LiveServerTest {
  /** {@code n} cases s0..; every third output (index divisible by 3) lacks "Paris". */
  private static List<Case> cases(int n) {
    List<Case> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      String text = i % 3 == 0 ? "no idea" : "answer " + i + ": Paris";
      out.add(
          Case.newBuilder()
              .setSample(
                  Sample.newBuilder()
                      .setId("s" + i)
                      .setInput(Values.value(Map.of("question", "capital?", "n", i))))
              .setOutput(Values.text(text))
              .build());
    }
    return out;
  }

  /** Runs and records {@code cases} under {@code name}, gated on {@code baseline} if set. */
  private static RunSummary record(String name, List<Case> cases, String baseline) {
    RunSuiteRequest.Builder request =
        RunSuiteRequest.newBuilder()
            .addCompact("contains:Paris")
            .addCompact("length:1..100")
            .addAllCases(cases)
            .setRecord(true)
            .setRunName(name);
    if (baseline != null) {
      request.setGate(Gate.newBuilder().setBaseline(baseline));
    }
    try (SuiteRun run = client.runSuite(request.build())) {
      RunSummary summary = run.summary();
      assertNotEquals("", summary.getRunId(), "a recorded run has an id");
      return summary;
    }
  }

  @Test
  void recordedRunsReadBackCompareAndDelete() {
    String name = "java-runs-" + UUID.randomUUID();
    RunSummary base = record(name, cases(3), null);
    List<Case> worse = new ArrayList<>(cases(3));
    // s1 passed contains:Paris in the base run and fails now.
    worse.set(1, worse.get(1).toBuilder().setOutput(Values.text("Berlin")).build());
    RunSummary now = record(name, worse, base.getRunId());
    assertFalse(now.getGatePassed(), "the gate passed against a baseline it regressed from");

    ListRunsResponse page = client.listRuns(ListRunsRequest.newBuilder().setName(name).build());
    assertEquals(
        List.of(now.getRunId(), base.getRunId()),
        page.getRunsList().stream().map(Run::getRunId).toList(),
        "both runs, newest first");

    Run run = client.getRun(base.getRunId());
    assertEquals(RunStatus.RUN_STATUS_COMPLETE, run.getStatus());
    assertEquals(3, run.getResults());
    assertEquals(name, run.getName());

    ListRunResultsResponse failed =
        client.listRunResults(
            ListRunResultsRequest.newBuilder()
                .setRunId(now.getRunId())
                .setCheck("contains:Paris")
                .setOutcome(Outcome.OUTCOME_FAILED)
                .build());
    // s0 ("no idea") and s1 ("Berlin"); s2 passes.
    assertEquals(
        List.of("s0", "s1"),
        failed.getResultsList().stream().map(r -> r.getResult().getSampleId()).sorted().toList());

    CompareRunsResponse cmp = client.compareRuns(base.getRunId(), now.getRunId());
    assertEquals(
        List.of("s1"), cmp.getRegressedList().stream().map(c -> c.getSampleId()).toList());
    assertEquals(1, cmp.getRegressedTotal());
    assertEquals(List.of("contains:Paris"), cmp.getRegressed(0).getChecksList());

    client.deleteRun(now.getRunId());
    ScorewireException e = assertThrows(ScorewireException.class, () -> client.getRun(now.getRunId()));
    assertEquals(Status.Code.NOT_FOUND, e.code(), e.getMessage());
    // The base run is still there.
    assertEquals(base.getRunId(), client.getRun(base.getRunId()).getRunId());
  }

  @Test
  void listRunsAndListRunResultsPageThroughEveryRunAndResultOnce() {
    String name = "java-runs-paging-" + UUID.randomUUID();
    List<String> recorded = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      recorded.add(record(name, cases(3), null).getRunId());
    }
    ListRunsResponse first =
        client.listRuns(ListRunsRequest.newBuilder().setName(name).setPageSize(2).build());
    assertEquals(2, first.getRunsCount());
    assertNotEquals("", first.getNextPageToken(), "a first page of 2 of 3 runs has a next page");
    ListRunsResponse second =
        client.listRuns(
            ListRunsRequest.newBuilder()
                .setName(name)
                .setPageSize(2)
                .setPageToken(first.getNextPageToken())
                .build());
    assertEquals("", second.getNextPageToken(), "the second page is the last");
    List<String> paged = new ArrayList<>();
    first.getRunsList().forEach(r -> paged.add(r.getRunId()));
    second.getRunsList().forEach(r -> paged.add(r.getRunId()));
    List<String> newestFirst = new ArrayList<>(recorded);
    Collections.reverse(newestFirst);
    assertEquals(newestFirst, paged, "every run once, newest first");

    // One run with 5 results, read 2 at a time: pages of 2, 2 and 1.
    String runId = record(name, cases(5), null).getRunId();
    List<String> seen = new ArrayList<>();
    List<Integer> sizes = new ArrayList<>();
    String token = "";
    do {
      ListRunResultsResponse page =
          client.listRunResults(
              ListRunResultsRequest.newBuilder()
                  .setRunId(runId)
                  .setPageSize(2)
                  .setPageToken(token)
                  .build());
      sizes.add(page.getResultsCount());
      page.getResultsList().forEach(r -> seen.add(r.getResult().getSampleId()));
      token = page.getNextPageToken();
    } while (!token.isEmpty() && sizes.size() < 10);
    assertEquals(List.of(2, 2, 1), sizes);
    assertEquals(
        List.of("s0", "s1", "s2", "s3", "s4"), seen.stream().sorted().toList(), "each result once");
  }

  @Test
  void deleteRunOfARunStillRecordingIsFailedPrecondition() {
    String name = "java-runs-running-" + UUID.randomUUID();
    StreamConfig config =
        StreamConfig.newBuilder()
            .addCompact("contains:Paris")
            .setRecord(true)
            .setRunName(name)
            .build();
    try (ScoreStream stream = client.scoreStream(config)) {
      stream.send(
          StreamCase.newBuilder()
              .setRequestId("r0")
              .setSample(Sample.newBuilder().setId("s0"))
              .setOutput(Values.text("Paris"))
              .build());
      // The server creates the run before it scores the first case, so once a response
      // is back the run exists; the stream stays open, so it is still running.
      assertTrue(stream.hasNext());
      assertEquals("r0", stream.next().getRequestId());
      List<Run> listed =
          client.listRuns(ListRunsRequest.newBuilder().setName(name).build()).getRunsList();
      assertEquals(1, listed.size());
      Run running = listed.get(0);
      assertEquals(RunStatus.RUN_STATUS_RUNNING, running.getStatus());
      assertEquals("ScoreStream", running.getSource());

      ScorewireException e =
          assertThrows(ScorewireException.class, () -> client.deleteRun(running.getRunId()));
      assertEquals(Status.Code.FAILED_PRECONDITION, e.code(), e.getMessage());
      assertTrue(e.description().contains("still running"), e.description());
      assertEquals(RunStatus.RUN_STATUS_RUNNING, client.getRun(running.getRunId()).getStatus());

      // Once the stream ends, the run is complete and can be deleted.
      stream.complete();
      for (ScoreStreamResponse ignored : stream) {
        // drain: no more cases were sent
      }
      assertEquals(RunStatus.RUN_STATUS_COMPLETE, client.getRun(running.getRunId()).getStatus());
      client.deleteRun(running.getRunId());
      ScorewireException gone =
          assertThrows(ScorewireException.class, () -> client.getRun(running.getRunId()));
      assertEquals(Status.Code.NOT_FOUND, gone.code(), gone.getMessage());
    }
  }

  @Test
  void aRunSentInPartsIsOneRunAndClosesOnce() {
    String runId = client.openRun(OpenRunRequest.newBuilder().setRunName("java-parts").setRecord(true).build());
    assertNotEquals("", runId);
    List<Case> all = cases(4); // s0 and s3 lack "Paris"
    List<RunSummary> parts = new ArrayList<>();
    for (int first = 0; first < 4; first += 2) {
      RunSuiteRequest part =
          RunSuiteRequest.newBuilder()
              .addCompact("contains:Paris")
              .addAllCases(all.subList(first, first + 2))
              .setPart(RunPart.newBuilder().setRunId(runId).setFirstIndex(first))
              .build();
      try (SuiteRun run = client.runSuite(part)) {
        parts.add(run.summary());
      }
    }
    RunSummary merged = Summaries.merge(parts);
    client.closeRun(CloseRunRequest.newBuilder().setRunId(runId).setSummary(merged).build());
    Run run = client.getRun(runId);
    assertEquals(RunStatus.RUN_STATUS_COMPLETE, run.getStatus());
    assertEquals(4, run.getResults());
    assertEquals(2, run.getSummary().getCasesPassed());
    ScorewireException again =
        assertThrows(
            ScorewireException.class,
            () -> client.closeRun(CloseRunRequest.newBuilder().setRunId(runId).setSummary(merged).build()));
    assertEquals(Status.Code.FAILED_PRECONDITION, again.code(), again.getMessage());
    assertTrue(again.getMessage().contains(runId), again.getMessage());
    client.deleteRun(runId);
  }

  @Test
  void getRunOfAnUnknownIdIsNotFound() {
    ScorewireException e =
        assertThrows(ScorewireException.class, () -> client.getRun("no-such-run-" + UUID.randomUUID()));
    assertEquals(Status.Code.NOT_FOUND, e.code(), e.getMessage());
  }
}
