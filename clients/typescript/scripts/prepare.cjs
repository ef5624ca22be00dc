// `prepare`: builds dist/ whenever the package is installed from a directory or a git
// checkout (`npm install ./clients/typescript`), so what gets linked is never an
// unbuilt package. npm does not install a linked directory's own dependencies, so
// when TypeScript is missing this installs them first, from package-lock.json, with
// scripts off (which keeps this script from running itself again).
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const dir = path.resolve(__dirname, "..");

function run(command, args) {
  const result = spawnSync(command, args, { cwd: dir, stdio: "inherit", shell: process.platform === "win32" });
  if (result.status !== 0) {
    console.error(`@scorewire/client prepare: \`${command} ${args.join(" ")}\` failed in ${dir}`);
    process.exit(result.status ?? 1);
  }
}

let tsc;
try {
  tsc = require.resolve("typescript/bin/tsc", { paths: [dir] });
} catch {
  run("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]);
  tsc = require.resolve("typescript/bin/tsc", { paths: [dir] });
}
run(process.execPath, [tsc, "-p", "tsconfig.build.json"]);
