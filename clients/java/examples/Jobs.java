import dev.scorewire.client.FieldViolation;
import dev.scorewire.client.ScorewireClient;
import dev.scorewire.client.ScorewireException;
import dev.scorewire.client.Values;
import dev.scorewire.v1.Case;
import dev.scorewire.v1.CheckAggregations;
import dev.scorewire.v1.Job;
import dev.scorewire.v1.JobConfig;
import dev.scorewire.v1.Run;
import dev.scorewire.v1.Sample;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Score a batch as an evaluation job: create it, wait for its end, read its aggregations. */
public class Jobs {
  public static void main(String[] args) {
    String address = System.getenv().getOrDefault("SCOREWIRE_ADDRESS", "127.0.0.1:50051");
    List<String> texts = List.of("Paris is the capital of France.", "Lyon, I think.", "It is Paris.", "Paris.");
    List<Case> cases = new ArrayList<>();
    for (int i = 0; i < texts.size(); i++) {
      cases.add(Case.newBuilder()
          .setSample(Sample.newBuilder().setId("q" + (i + 1))).setOutput(Values.text(texts.get(i))).build());
    }
    try (ScorewireClient client = ScorewireClient.newBuilder(address).build()) {
      // Stored once created: the program could exit now and read the job later by its id.
      Job job = client.createJob(JobConfig.newBuilder()
          .addCompact("contains:Paris").addCompact("length:1..40")
          .setName("capitals").putLabels("team", "geo").build(), cases);
      System.out.println("created: " + job.getState() + " " + job.getCasesTotal() + " cases");

      // waitJob watches the job (watchJob iterates each change of its progress) to its end.
      Job done = client.waitJob(job.getJobId());
      System.out.println("ended: " + done.getState() + " " + done.getCasesDone() + "/" + done.getCasesTotal());
      Run run = client.getRun(done.getRunId()); // the job's recorded run
      System.out.println("run: " + run.getName() + " " + run.getResults() + " results");
      for (CheckAggregations a : done.getAggregationsList()) {
        System.out.printf(Locale.ROOT, "%s: average %.2f, median %.2f, p95 %.2f%n",
            a.getName(), a.getAverage(), a.getMedian(), a.getP95());
      }

      // A job that has ended cannot be cancelled: refused naming the field.
      try {
        client.cancelJob(job.getJobId());
      } catch (ScorewireException e) {
        for (FieldViolation v : e.fieldViolations()) System.out.println("cancel: " + e.code() + " " + v.field());
      }
    }
  }
}
