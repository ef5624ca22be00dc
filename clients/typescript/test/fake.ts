// An in-process fake ScoringService on 127.0.0.1 for the tests of what a live server
// never does (refusals a lost replica causes); shared by retry and shards-retry tests.
import * as grpc from "@grpc/grpc-js";

import { ScoringServiceService, type ScoringServiceServer } from "../src";

export interface FakeServer {
  readonly address: string;
  stop(): Promise<void>;
}

/** Serves `implementation` on a free loopback port. */
export async function startFake(implementation: ScoringServiceServer): Promise<FakeServer> {
  const server = new grpc.Server();
  server.addService(ScoringServiceService, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    address: `127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
