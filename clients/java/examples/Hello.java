import dev.scorewire.client.ScorewireClient;
import dev.scorewire.client.Values;
import dev.scorewire.v1.Score;
import dev.scorewire.v1.ScoreRequest;
import dev.scorewire.v1.ScoreResponse;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Scores an answer with three deterministic checks on a scorewire server. */
public class Hello {
  public static void main(String[] args) {
    String address = System.getenv().getOrDefault("SCOREWIRE_ADDRESS", "127.0.0.1:50051");
    try (ScorewireClient client = ScorewireClient.newBuilder(address).build()) {
      ScoreResponse response = client.score(ScoreRequest.newBuilder()
          .setOutput(Values.text("Lyon is the capital of France."))
          .addChecks(Values.check("contains", Map.of("needles", List.of("Paris", "France")))) // value: share found
          .addChecks(Values.check("regex", Map.of("pattern", "\\bcapital\\b", "flags", List.of("IGNORECASE"))))
          .addChecks(Values.check("length", Map.of("max_chars", 40)))
          .build()); // fails with a ScorewireException: code(), description(), fieldViolations()
      for (Score s : response.getScoresList()) {
        System.out.printf(Locale.ROOT, "%-9s %s %.2f%n", s.getName(), s.getPassed() ? "pass" : "fail", s.getValue());
      }
      System.out.println("passed: " + response.getPassed());
    }
  }
}
