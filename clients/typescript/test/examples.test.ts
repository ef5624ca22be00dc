// The README's first program, examples/hello.ts, run as a user runs it against a real
// scorewire server (see server.ts): its whole stdout must be examples/hello.expected.txt.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, mkdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { type TestServer, startServer } from "./server";

const PACKAGE_DIR = path.resolve(__dirname, "..", ".."); // dist/test -> clients/typescript
const TIMEOUT = { timeout: 120_000 };

let server: TestServer | undefined;
before(async () => {
  server = await startServer();
}, TIMEOUT);
after(async () => {
  await server?.stop();
});

test("examples/hello.ts prints exactly examples/hello.expected.txt", TIMEOUT, async () => {
  // The example imports "@scorewire/client" by name: a node_modules-like directory on
  // NODE_PATH maps that name to this package (its main, dist/src, built by npm test's tsc).
  const modules = await mkdtemp(path.join(tmpdir(), "scorewire-example-"));
  try {
    await mkdir(path.join(modules, "@scorewire"));
    await symlink(PACKAGE_DIR, path.join(modules, "@scorewire", "client"), "dir");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [path.join(PACKAGE_DIR, "dist", "examples", "hello.js")],
      { env: { ...process.env, NODE_PATH: modules, SCOREWIRE_ADDRESS: server!.address }, timeout: 60_000 },
    );
    const expected = await readFile(path.join(PACKAGE_DIR, "examples", "hello.expected.txt"), "utf8");
    assert.equal(stdout, expected);
  } finally {
    await rm(modules, { recursive: true, force: true });
  }
});
