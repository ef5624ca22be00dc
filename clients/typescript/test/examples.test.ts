// The README's programs, examples/hello.ts first and examples/observe.ts, run as a user runs
// them against a real scorewire server (see server.ts): the whole stdout of each must be
// its examples/*.expected.txt.
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

for (const name of ["hello", "observe"]) {
  test(`examples/${name}.ts prints exactly examples/${name}.expected.txt`, TIMEOUT, async () => {
    // The example imports "@scorewire/client" by name: a node_modules-like directory on
    // NODE_PATH maps that name to this package (its main, dist/src, built by npm test's tsc).
    const modules = await mkdtemp(path.join(tmpdir(), "scorewire-example-"));
    try {
      await mkdir(path.join(modules, "@scorewire"));
      await symlink(PACKAGE_DIR, path.join(modules, "@scorewire", "client"), "dir");
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [path.join(PACKAGE_DIR, "dist", "examples", `${name}.js`)],
        { env: { ...process.env, NODE_PATH: modules, SCOREWIRE_ADDRESS: server!.address }, timeout: 60_000 },
      );
      const expected = await readFile(path.join(PACKAGE_DIR, "examples", `${name}.expected.txt`), "utf8");
      assert.equal(stdout, expected);
    } finally {
      await rm(modules, { recursive: true, force: true });
    }
  });
}
