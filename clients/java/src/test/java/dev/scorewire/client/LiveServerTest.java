package dev.scorewire.client;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * A test class talking to a real scorewire server ({@link TestServer}) through one client:
 * started before the class's first test, closed after its last.
 */
@Timeout(120)
abstract class LiveServerTest {
  static TestServer server;
  static ScorewireClient client;

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
}
