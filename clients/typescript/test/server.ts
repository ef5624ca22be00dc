import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";

/** A scorewire server the tests talk to. */
export interface TestServer {
  /** `host:port` of the server. */
  readonly address: string;
  /** Stops the server if the tests started it. */
  stop(): Promise<void>;
}

const PACKAGE_DIR = path.resolve(__dirname, "..", ".."); // dist/test -> clients/typescript
const READY_LINE = /^scorewire listening on (\S+):(\d+)\s*$/;
const START_TIMEOUT_MS = 60_000;

/**
 * Uses the server at SCOREWIRE_ADDR when set; otherwise starts SCOREWIRE_BIN (default
 * ../../.venv/bin/scorewire from clients/typescript) on a free port and reads the port
 * from its `scorewire listening on HOST:PORT` line.
 */
export async function startServer(): Promise<TestServer> {
  const address = process.env.SCOREWIRE_ADDR;
  if (address) return { address, stop: async () => {} };

  const bin = process.env.SCOREWIRE_BIN
    ? path.resolve(process.env.SCOREWIRE_BIN)
    : path.resolve(PACKAGE_DIR, "../../.venv/bin/scorewire");
  const child = spawn(bin, ["serve", "--host", "127.0.0.1", "--port", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
    // A free metrics port, so several servers (one per client's tests) can run at once;
    // its own state directory and the observe tests' evaluation rule.
    env: {
      ...process.env,
      SCOREWIRE_METRICS_PORT: "0",
      SCOREWIRE_STATE_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "scorewire-state-")),
      SCOREWIRE_OBSERVE_RULES_FILE: path.resolve(PACKAGE_DIR, "../../tests/clients/observe_rules.yaml"),
    },
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-16_384);
  });
  try {
    const found = await readyAddress(child, bin, () => stderr);
    return { address: found, stop: () => stop(child) };
  } catch (err) {
    await stop(child);
    throw err;
  }
}

function readyAddress(child: ChildProcess, bin: string, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    const fail = (why: string): void => {
      clearTimeout(timer);
      reject(new Error(`scorewire server ${bin}: ${why}\n--- stderr ---\n${stderr()}`));
    };
    const timer = setTimeout(() => fail(`no ready line within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    child.once("error", (err) => fail(err.message));
    child.once("exit", (code, signal) => fail(`exited (code ${code}, signal ${signal}) before serving`));
    lines.on("line", (line) => {
      const match = READY_LINE.exec(line);
      if (match === null) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve(`${match[1]}:${match[2]}`);
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
