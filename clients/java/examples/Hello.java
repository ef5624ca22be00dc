import dev.scorewire.client.ScorewireClient;
import dev.scorewire.client.Values;
import dev.scorewire.v1.CheckSpec;
import dev.scorewire.v1.Sample;
import dev.scorewire.v1.Score;
import dev.scorewire.v1.ScoreRequest;
import dev.scorewire.v1.ScoreResponse;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Scores two answers with three deterministic checks on a scorewire server. */
public class Hello {
  public static void main(String[] args) {
    String address = System.getenv().getOrDefault("SCOREWIRE_ADDRESS", "127.0.0.1:50051");
    List<CheckSpec> checks = List.of(
        Values.check("contains", Map.of("needles", List.of("Paris", "France"))), // value: share found
        Values.check("regex", Map.of("pattern", "\\bcapital\\b", "flags", List.of("IGNORECASE"))),
        Values.check("length", Map.of("max_chars", 40)));
    String[][] answers = {
      {"q1", "The capital of France is Paris."},
      {"q2", "Lyon is the capital of France, I think, but I am not sure."},
    };

    try (ScorewireClient client = ScorewireClient.newBuilder(address).build()) {
      for (String[] answer : answers) {
        ScoreResponse response = client.score(ScoreRequest.newBuilder()
            .setSample(Sample.newBuilder().setId(answer[0]))
            .setOutput(Values.text(answer[1]))
            .addAllChecks(checks)
            .build()); // fails with a ScorewireException: code(), description(), fieldViolations()
        System.out.println(answer[0] + ": " + verdict(response.getPassed()));
        for (Score s : response.getScoresList()) {
          System.out.printf(Locale.ROOT, "  %-9s %s %.2f%n", s.getName(), verdict(s.getPassed()), s.getValue());
        }
      }
    }
  }

  static String verdict(boolean passed) {
    return passed ? "pass" : "fail";
  }
}
