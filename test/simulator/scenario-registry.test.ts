import { describe, expect, it } from "vitest";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { join } from "node:path";

const HOST_DIR = fileURLToPath(new URL("../../fixtures/sim/app/out/host/", import.meta.url));
const registry = await import(pathToFileURL(join(HOST_DIR, "sim-scenarios.js")).href);
const README = await readFile(fileURLToPath(new URL("../../fixtures/README.md", import.meta.url)), "utf8");

describe("scenario selection by prompt text", () => {
  it("takes the first sim:<name> token and the key=value args right after it", () => {
    expect(registry.parseScenario("please sim:stream n=20000 bytes=64 then stop")).toEqual({
      name: "stream",
      args: { n: "20000", bytes: "64" },
      explicit: true,
    });
    expect(registry.parseScenario("sim:crash how=exit sim:plain")).toEqual({ name: "crash", args: { how: "exit" }, explicit: true });
    expect(registry.parseScenario("no token here")).toEqual({ name: "plain", args: {}, explicit: false });
    expect(registry.parseScenario("email me at x@sim:tool-bash")).toEqual({ name: "plain", args: {}, explicit: false });
  });
});

describe("every scenario is tested and documented", () => {
  it("each registered name appears as sim:<name> in a simulator test and in the fixtures README table", async () => {
    const dir = fileURLToPath(new URL(".", import.meta.url));
    const sources = await Promise.all(
      (await readdir(dir))
        .filter((f) => f.endsWith(".test.ts") && f !== "scenario-registry.test.ts")
        .map((f) => readFile(join(dir, f), "utf8")),
    );
    const text = sources.join("\n");
    const names = Object.keys(registry.SCENARIOS);
    expect(names.length).toBe(51);
    const untested = names.filter((name) => !new RegExp(`sim:${name}(?![\\w-])`).test(text));
    expect(untested).toEqual([]);
    const undocumented = names.filter((name) => !README.includes(`| \`${name}\``));
    expect(undocumented).toEqual([]);
  });
});
