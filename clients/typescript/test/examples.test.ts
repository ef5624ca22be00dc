// Every program of examples/ (examples/NAME.ts, with its output in NAME.expected.txt), run
// as a user runs it against a real scorewire server (see server.ts): its whole stdout must
// be the file. The README shows each program and that output verbatim
// (tests/clients/test_client_pages.py holds them together), so every TypeScript block of the
// README runs here.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { mkdtemp, mkdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { type TestServer, startServer } from "./server";

const PACKAGE_DIR = path.resolve(__dirname, "..", ".."); // dist/test -> clients/typescript
const EXAMPLES = path.join(PACKAGE_DIR, "examples");
const TIMEOUT = { timeout: 120_000 };

let server: TestServer | undefined;
before(async () => {
  server = await startServer();
}, TIMEOUT);
after(async () => {
  await server?.stop();
});

const names = readdirSync(EXAMPLES)
  .filter((file) => file.endsWith(".expected.txt"))
  .map((file) => file.slice(0, -".expected.txt".length));

test("examples/ holds programs with their outputs", () => {
  assert.ok(names.includes("hello"), "examples/hello.expected.txt is missing");
  assert.deepEqual(
    readdirSync(EXAMPLES).filter((file) => file.endsWith(".ts")).map((file) => file.slice(0, -3)).sort(),
    [...names].sort(),
    "every examples/NAME.ts has its NAME.expected.txt, and every output its program",
  );
});

for (const name of names) {
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
      const expected = await readFile(path.join(EXAMPLES, `${name}.expected.txt`), "utf8");
      assert.equal(stdout, expected);
    } finally {
      await rm(modules, { recursive: true, force: true });
    }
  });
}
