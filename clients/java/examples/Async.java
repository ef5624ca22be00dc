import dev.scorewire.client.ScorewireClient;
import dev.scorewire.client.SuiteResult;
import dev.scorewire.client.Values;
import dev.scorewire.v1.Case;
import dev.scorewire.v1.RunSuiteRequest;
import dev.scorewire.v1.ScoreRequest;
import dev.scorewire.v1.ScoreResponse;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** The asynchronous client: every call returns a CompletableFuture at once. */
public class Async {
  public static void main(String[] args) {
    String address = System.getenv().getOrDefault("SCOREWIRE_ADDRESS", "127.0.0.1:50051");
    try (ScorewireClient client = ScorewireClient.newBuilder(address).build()) {
      CompletableFuture<ScoreResponse> score = client.async().score(ScoreRequest.newBuilder()
          .setOutput(Values.text("Northstar ships it.")).addCompact("contains:Northstar").build());
      CompletableFuture<SuiteResult> run = client.async().runSuite(RunSuiteRequest.newBuilder()
          .addCompact("contains:Northstar")
          .addCases(Case.newBuilder().setOutput(Values.text("Northstar")))
          .addCases(Case.newBuilder().setOutput(Values.text("hi")))
          .build());
      CompletableFuture<ScoreResponse> refused = client.async().score(ScoreRequest.newBuilder()
          .setOutput(Values.text("x")).addChecks(Values.check("no_such_check", Map.of())).build());

      System.out.println("score passed: " + score.join().getPassed());
      System.out.println("pass rate: " + run.join().summary().getPassRate());
      refused
          .thenAccept(r -> System.out.println("unexpected: " + r.getPassed()))
          .exceptionally(e -> { // a CompletionException around the ScorewireException
            System.out.println("refused: " + e.getCause().getClass().getSimpleName());
            return null;
          })
          .join();
    }
  }
}
