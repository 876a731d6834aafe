#!/usr/bin/env node
// The `workmem` command of the npm package @workmem/cli: runs the binary that this platform's
// package (@workmem/cli-<platform>-<arch>, an optional dependency npm installs only where its
// `os` and `cpu` match) carries, with this process's arguments, input and output.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const platformPackage = `@workmem/cli-${process.platform}-${process.arch}`;
let binary;
try {
  binary = require.resolve(`${platformPackage}/bin/workmem`);
} catch {
  console.error(
    `workmem: no binary for ${process.platform}-${process.arch}: ${platformPackage} is not installed ` +
      "(npm skips an optional dependency built for another platform, and --omit=optional skips all of them); " +
      "on other platforms, build it with `cargo install --locked --path host/cli` from a clone",
  );
  process.exit(1);
}
const run = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  console.error(`workmem: could not run ${binary}: ${run.error.message}`);
  process.exit(1);
}
// Ended by a signal (Ctrl-C reaches the whole process group): end the same way, so a shell or
// a supervisor sees what it would see from the binary itself.
if (run.signal) process.kill(process.pid, run.signal);
process.exit(run.status ?? 1);
