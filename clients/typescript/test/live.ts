// The real scorewire server (see server.ts) and one client of it, for the tests that
// talk to a live server (client and shards tests); fake.ts has the in-process fake.
import { after, before } from "node:test";

import { ScorewireClient } from "../src";
import { type TestServer, startServer } from "./server";

/** The live server and its client, there once the `before` hook of useLiveServer has run. */
export interface Live {
  /** `host:port` of the server. */
  readonly address: string;
  /** A client of the server, ready. */
  readonly client: ScorewireClient;
}

/**
 * Registers the file's `before` hook, which starts (or finds, SCOREWIRE_ADDR) the server
 * and connects a client, waiting until it is ready, and the `after` hook, which closes
 * the client and stops the server if the hook started it.
 */
export function useLiveServer(options: { timeout: number } = { timeout: 120_000 }): Live {
  let server: TestServer | undefined;
  let client: ScorewireClient | undefined;
  before(async () => {
    server = await startServer();
    client = new ScorewireClient(server.address);
    await client.waitForReady(30_000);
  }, options);
  after(async () => {
    client?.close();
    await server?.stop();
  });
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the live server's ${what} is used before its before hook ran`);
    return value;
  };
  return {
    get address() {
      return ready(server, "address").address;
    },
    get client() {
      return ready(client, "client");
    },
  };
}
