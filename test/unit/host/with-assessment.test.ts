/**
 * The launcher fed by the real compatibility check (src/compat/assess.ts) on a simulated
 * install: the paths and manifest it resolves are what the bootstrap needs, and a failing
 * assessment launches nothing.
 */
import { join } from "node:path";
import { writeFile } from "node:fs/promises";
import { afterEach, beforeEach, expect, it } from "vitest";
import { assessInstall } from "../../../src/compat/assess.js";
import { HostConnection } from "../../../src/host/host-connection.js";
import { silentLogger } from "../../../src/log/logger.js";
import { rejectionOf } from "./support/connect.js";
import { createTestInstall, readCallLog, type TestInstall } from "./support/sim.js";

let install: TestInstall;
let host: HostConnection | undefined;

beforeEach(async () => {
  install = await createTestInstall();
});

afterEach(async () => {
  await host?.close();
  await install.cleanup();
});

function connect(afterCheck?: () => Promise<void>): HostConnection {
  host = new HostConnection({
    logger: silentLogger,
    env: { ...process.env, ...install.env },
    resolveInstall: async () => {
      const assessment = await assessInstall({
        installRoot: install.root,
        manifestPath: install.manifestPath,
        cacheFile: join(install.root, "..", "fingerprints.json"),
        env: { ...process.env, ...install.env },
      });
      await afterCheck?.();
      return assessment;
    },
  });
  return host;
}

it("launches the host of an install the check found supported", async () => {
  const h = connect();
  await expect(h.call("agent", "initialize", { workspacePath: "/w" })).resolves.toMatchObject({ available: true });
  expect(h.incarnation).toBe(1);
});

it("launches nothing when the check fails, and says why", async () => {
  // a tampered host index: the artifact hashes no longer match the manifest
  await writeFile(join(install.appArchive, "out", "host", "index.js"), "// tampered\n", { flag: "a" });
  const h = connect();
  const error = await rejectionOf(h.call("agent", "initialize", { workspacePath: "/w" }));
  expect(error.code).toBe("UNSUPPORTED_ZCODE");
  expect(error.message.length).toBeGreaterThan(0);
  expect(h.incarnation).toBe(0);
  expect(readCallLog(install.callLogPath)).toEqual([]);
});

it.each(["index.js", "rpc"])("refuses a host file (%s) swapped after the check, before any host code runs", async (which) => {
  const file =
    which === "index.js"
      ? join(install.appArchive, "out", "host", "index.js")
      : join(install.appArchive, ...install.flavour.rpcModule.split("/"));
  // verification passes, then the file changes before the bootstrap imports it
  const h = connect(() => writeFile(file, "\n// swapped after verification\n", { flag: "a" }));
  const error = await rejectionOf(h.call("agent", "initialize", { workspacePath: "/w" }));
  expect(error.code).toBe("UNSUPPORTED_ZCODE");
  expect(error.message).toMatch(/changed after zcode-acp verified them/);
  expect(readCallLog(install.callLogPath)).toEqual([]);
});
