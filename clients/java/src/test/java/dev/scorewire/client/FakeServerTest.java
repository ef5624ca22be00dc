package dev.scorewire.client;

import io.grpc.BindableService;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerCredentials;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A test class talking to a fake ScoringService of its own on 127.0.0.1 through a client
 * built as a caller builds one (its own channel, service config and retries): a new
 * {@link #newService()} and client for each test, both stopped after it.
 */
abstract class FakeServerTest<S extends BindableService> {
  S service;
  ScorewireClient client;
  private Server server;

  /** The fake this class's tests talk to, a new one for each test. */
  abstract S newService();

  @BeforeEach
  final void startFakeServer() throws Exception {
    service = newService();
    server = loopbackServerBuilder().addService(service).build().start();
    client = ScorewireClient.newBuilder("127.0.0.1:" + server.getPort()).build();
  }

  @AfterEach
  final void stopFakeServer() throws Exception {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /**
   * A server builder bound to 127.0.0.1, port 0. grpc-netty-shaded is a runtime
   * dependency (tests cannot compile against it), and {@code Grpc.newServerBuilderForPort}
   * binds every interface, so its NettyServerBuilder is reached by name.
   */
  static ServerBuilder<?> loopbackServerBuilder() throws Exception {
    Class<?> netty = Class.forName("io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder");
    return (ServerBuilder<?>)
        netty
            .getMethod("forAddress", SocketAddress.class, ServerCredentials.class)
            .invoke(null, new InetSocketAddress("127.0.0.1", 0), InsecureServerCredentials.create());
  }
}
