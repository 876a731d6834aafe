#!/usr/bin/env node
// The `workmem` command of the npm package @workmem/cli: runs the binary that this platform's
// package (@workmem/cli-<platform>-<arch>, an optional dependency npm installs only where its
// `os` and `cpu` match) carries, with this process's arguments, input and output.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { constants } from "node:os";

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
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
// A signal sent to this process alone (a supervisor's SIGTERM, `kill`) is passed on, so the
// binary stops as it would have been told to, frees what it holds (a proxy's port) and its exit
// is this one's; the binary's own handling decides what a second one (Ctrl-C reaches the
// whole process group) does.
const forwarded = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"];
for (const signal of forwarded) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on("error", (error) => {
  console.error(`workmem: could not run ${binary}: ${error.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // Ended by a signal: end the same way, so a shell or a supervisor sees what it would see
    // from the binary itself (with this process's handler gone, the default action runs).
    for (const s of forwarded) process.removeAllListeners(s);
    process.kill(process.pid, signal);
    // Should it not end this process (a signal whose default is to go on), the shell's code.
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 200);
    return;
  }
  process.exit(code ?? 1);
});
