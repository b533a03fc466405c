/**
 * First-use pinning of the RPC module (docs/runtime-contract.md §7, adr/0020) through the
 * assessment, on the simulated 3.14.4 (its manifest pins the host entry and leaves the RPC module
 * to first use): reported before, recorded by the bridge's use, enforced after; a bad or foreign
 * pin file fails closed naming the file.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assessInstall, type AssessOptions } from "../../../src/compat/assess.js";
import { firstUsePinFile } from "../../../src/compat/first-use-pins.js";
import { createSimulatedInstall, SIM_RELEASES, type SimInstall } from "../../../fixtures/sim-install.js";
import { editMember, flipOneByte, writeManifest } from "../../support/tamper.js";

let sim: SimInstall;
let work: string;
let pinDir: string;
const flavour = SIM_RELEASES["3.14.4"];
beforeEach(async () => {
  sim = await createSimulatedInstall({ release: "3.14.4" });
  work = await mkdtemp(join(tmpdir(), "zcode-acp-first-use-"));
  pinDir = join(work, "config", "pins");
});
afterEach(async () => {
  await sim.cleanup();
  await rm(work, { recursive: true, force: true });
});
const assess = (extra: Partial<AssessOptions> = {}) =>
  assessInstall({
    installRoot: sim.root,
    manifestPath: sim.manifestPath,
    cacheFile: join(work, "cache.json"),
    env: process.env,
    pinDir,
    ...extra,
  });
const pinFile = () => firstUsePinFile(pinDir, sim.manifest.artifact.id);
const rpcPinning = (report: Awaited<ReturnType<typeof assess>>) => report.pinning?.find((p) => p.what === "RPC module");

describe("first-use pinning of the RPC module", () => {
  it("check reports 'will be pinned'; the bridge's use records it with the date; then it is a pinned path", async () => {
    const before = await assess();
    expect(before.supported).toBe(true);
    expect(rpcPinning(before)).toMatchObject({ how: "will be pinned on first use", path: flavour.rpcModule, record: pinFile() });
    expect(before.rpc).toMatchObject({ foundBy: "exports", sha256: sim.rpcModuleSha256, exports: flavour.exports });
    await expect(readFile(pinFile())).rejects.toMatchObject({ code: "ENOENT" });

    const now = new Date("2026-12-03T10:00:00.000Z");
    const used = await assess({ recordFirstUse: true, now: () => now });
    expect(used.supported).toBe(true);
    expect(rpcPinning(used)).toMatchObject({ how: "pinned on first use", on: "2026-12-03" });
    expect(used.message).toContain("RPC module: pinned on first use on 2026-12-03");
    expect(JSON.parse(await readFile(pinFile(), "utf8"))).toMatchObject({
      pinnedAt: now.toISOString(),
      rpcModule: { path: flavour.rpcModule, sha256: sim.rpcModuleSha256 },
    });

    const after = await assess({ recordFirstUse: true });
    expect(after.rpc).toMatchObject({ foundBy: "pinned path" });
    expect(rpcPinning(after)).toMatchObject({ how: "pinned on first use", on: "2026-12-03" });
    expect(after.pinning?.find((p) => p.what === "host entry")).toMatchObject({ how: "pinned by the given manifest" });
  });

  it("a module changed after its pin is refused, naming the pin file; the pin stays", async () => {
    await assess({ recordFirstUse: true });
    const pin = await readFile(pinFile(), "utf8");
    await editMember(sim, flavour.rpcModule, flipOneByte);
    const report = await assess({ recordFirstUse: true });
    expect(report.failedStep).toBe("host-artifacts");
    expect(report.message).toContain(`The RPC module ${flavour.rpcModule} of ZCode 3.14.4 changed since it was pinned on first use`);
    expect(report.message).toContain(pinFile());
    expect(await readFile(pinFile(), "utf8")).toBe(pin);
  });

  it.each([
    ["not JSON", "{oops", /is not valid JSON/],
    ["of another shape", JSON.stringify({ schemaVersion: 1 }), /is not a valid first-use pin/],
  ])("a pin file that is %s fails closed naming it", async (_what, text, why) => {
    await assess({ recordFirstUse: true });
    await writeFile(pinFile(), text);
    const report = await assess();
    expect(report.failedStep).toBe("host-artifacts");
    expect(report.message).toContain(pinFile());
    expect(report.message).toMatch(why);
  });

  it("a pin recorded for another host entry is refused", async () => {
    await assess({ recordFirstUse: true });
    const pin = JSON.parse(await readFile(pinFile(), "utf8")) as { hostIndex: { sha256: string } };
    pin.hostIndex.sha256 = "0".repeat(64);
    await writeFile(pinFile(), JSON.stringify(pin));
    const report = await assess();
    expect(report.message).toMatch(/was recorded for another out\/host\/index\.js/);
  });

  it("without a pin store a first-use manifest is refused", async () => {
    const report = await assess({ pinDir: undefined });
    expect(report.failedStep).toBe("host-artifacts");
    expect(report.message).toMatch(/no first-use pin store is configured/);
  });

  it("a pin store that cannot be written refuses the use (nothing is used unpinned)", async () => {
    const blocked = join(work, "not-a-dir");
    await writeFile(blocked, "a file where the config dir should be\n");
    const report = await assess({ recordFirstUse: true, pinDir: join(blocked, "pins") });
    expect(report.supported).toBe(false);
    expect(report.message).toMatch(/first-use pin (of the RPC module in )?.*not-a-dir\/pins\//);
  });

  it("a public record's path must be the module found by its exports", async () => {
    const m = structuredClone(sim.manifest);
    m.artifact.rpcModule = { pin: "first-use", path: "out/host/chunk-BMP2VTTL.js" };
    const report = await assess({ manifestPath: await writeManifest(work, "m.json", m) });
    expect(report.message).toMatch(
      /found by its exports is out\/host\/chunk-LL2TIAQ2\.js, but the public record of ZCode 3\.14\.4 names out\/host\/chunk-BMP2VTTL\.js/,
    );
  });

  it("a recorded pin whose path is not the public record's is refused, naming the pin file", async () => {
    await assess({ recordFirstUse: true });
    const m = structuredClone(sim.manifest);
    m.artifact.rpcModule = { pin: "first-use", path: "out/host/chunk-BMP2VTTL.js" };
    const report = await assess({ manifestPath: await writeManifest(work, "m.json", m) });
    expect(report.failedStep).toBe("host-artifacts");
    expect(report.message).toContain(`The first-use pin ${pinFile()} names the RPC module ${flavour.rpcModule}`);
  });
});
