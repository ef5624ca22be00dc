// Hand each answer to scorewire for online evaluation; observe() never blocks or throws.
import dev.scorewire.client.Observer;
import dev.scorewire.client.ObserverOptions;
import dev.scorewire.client.ScorewireClient;
import dev.scorewire.client.Values;
import dev.scorewire.v1.Observation;
import dev.scorewire.v1.ObservationMetadata;
import dev.scorewire.v1.Sample;
import java.time.Duration;

public class Observe {
  /** A request handler: answer, then observe (it returns at once). */
  static String answer(Observer observer, String question) {
    String text = "Paris is the capital of France."; // your model's output
    observer.observe(
        Observation.newBuilder()
            .setSample(Sample.newBuilder().setInput(Values.value(question)))
            .setOutput(Values.text(text))
            // .setTrace(TraceContext.newBuilder().setTraceId(...).setSpanId(...)): your trace
            .setMetadata(ObservationMetadata.newBuilder().setRoute("/answer").setModel("my-model"))
            .build());
    return text;
  }

  public static void main(String[] args) {
    String address = System.getenv().getOrDefault("SCOREWIRE_ADDRESS", "127.0.0.1:50051");
    try (ScorewireClient client = ScorewireClient.newBuilder(address).build()) {
      Observer observer = client.observer(ObserverOptions.defaults().withBufferSize(10_000));
      System.out.println(answer(observer, "capital of France"));
      observer.close(Duration.ofSeconds(5)); // at shutdown: send what is buffered, for at most 5 s
      Observer.Stats stats = observer.stats();
      long dropped = stats.dropped().values().stream().mapToLong(Long::longValue).sum();
      System.out.printf("acknowledged: %d, dropped: %d%n", stats.queued() + stats.duplicate(), dropped);
    }
  }
}
