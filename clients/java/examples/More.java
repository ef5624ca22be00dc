import dev.scorewire.client.ScorewireClient;
import dev.scorewire.client.ScorewireException;
import dev.scorewire.client.SuiteRun;
import dev.scorewire.client.Values;
import dev.scorewire.v1.Case;
import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.CompareRunsResponse;
import dev.scorewire.v1.Label;
import dev.scorewire.v1.ListLabelsRequest;
import dev.scorewire.v1.PutLabelsRequest;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.RunSummary;
import dev.scorewire.v1.Sample;
import dev.scorewire.v1.Score;
import dev.scorewire.v1.ScoreRequest;
import dev.scorewire.v1.ScoreResponse;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** The calls beyond a first score: compact checks, a suite run, errors, labels, recorded runs. */
public class More {
  public static void main(String[] args) {
    String address = System.getenv().getOrDefault("SCOREWIRE_ADDRESS", "127.0.0.1:50051");
    try (ScorewireClient client = ScorewireClient.newBuilder(address).build()) {
      // Compact checks ("type:argument") beside a full one; regex is Python re syntax.
      ScoreResponse r = client.score(ScoreRequest.newBuilder()
          .setOutput(Values.text("Northstar ships it."))
          .addCompact("contains:Northstar").addCompact("length:10..500")
          .addChecks(Values.check("regex", Map.of("pattern", "\\bnorthstar\\b", "flags", List.of("IGNORECASE"))))
          .build());
      System.out.println("score: " + r.getPassed() + " " + r.getScoresList().stream().map(Score::getName).toList());

      // A case whose reference is JSON text (Values.json keeps every digit of a Long).
      Case a = Case.newBuilder()
          .setSample(Sample.newBuilder().setId("a")
              .setExpectedJson(Values.json(Map.of("answer", "Northstar", "build", 9007199254740993L))))
          .setOutput(Values.text("Northstar")).build();
      Case b = Case.newBuilder().setSample(Sample.newBuilder().setId("b")).setOutput(Values.text("hi")).build();

      // A suite run yields each case's result once, as it finishes; then the summary.
      try (SuiteRun run = client.runSuite(RunSuiteRequest.newBuilder()
          .addCompact("contains:Northstar").addCases(a).addCases(b).build())) {
        List<CaseResult> results = new ArrayList<>();
        run.forEach(results::add);
        results.sort(Comparator.comparingLong(CaseResult::getIndex));
        for (CaseResult result : results) System.out.println("case " + result.getIndex() + " " + result.getPassed());
        RunSummary summary = run.summary();
        System.out.println("pass rate: " + summary.getPassRate() + " gate passed: " + summary.getGatePassed());
      }

      // Bad input is refused naming the field: a ScorewireException with fieldViolations().
      try {
        client.score(ScoreRequest.newBuilder().setOutput(Values.text("x"))
            .addChecks(Values.check("output_length", Map.of("maximun", 5))).build());
      } catch (ScorewireException e) {
        e.fieldViolations().forEach(v -> System.out.println(e.code() + " " + v.field()));
      }

      // Human labels, which the `human` check reads; the request id is fresh per call.
      String hash = ScorewireClient.outputHash("Northstar ships it.");
      client.putLabels(PutLabelsRequest.newBuilder().addLabels(Label.newBuilder()
          .setSampleId("q1").setOutputHash(hash).setPassed(true).setLabeller("ann")).build());
      client.listLabels(ListLabelsRequest.newBuilder().setSampleId("q1").setOutputHash(hash).setLabeller("ann").build())
          .getLabelsList().forEach(l -> System.out.println("label: " + l.getLabeller() + " " + l.getPassed()));

      // Recorded runs: record two, compare the later with the first, read one back.
      RunSuiteRequest.Builder nightly = RunSuiteRequest.newBuilder()
          .addCompact("contains:Northstar").setRecord(true).setRunName("nightly");
      String baseRunId = record(client, nightly.clone().addCases(a));
      String runId = record(client, nightly.clone().addCases(b.toBuilder().setSample(a.getSample())));
      CompareRunsResponse cmp = client.compareRuns(baseRunId, runId);
      cmp.getRegressedList().forEach(c -> System.out.println("regressed: " + c.getSampleId() + " " + c.getChecksList()));
      System.out.println("run: " + client.getRun(runId).getName() + " " + client.getRun(runId).getStatus());
    }
  }

  private static String record(ScorewireClient client, RunSuiteRequest.Builder request) {
    try (SuiteRun run = client.runSuite(request.build())) {
      return run.summary().getRunId();
    }
  }
}
