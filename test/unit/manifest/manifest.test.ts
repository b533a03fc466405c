import { mkdtemp, mkdir, rm, writeFile, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { builtInManifestDir, loadManifests } from "../../../src/manifest/load-manifests.js";
import { validateManifest, fieldPath } from "../../../src/manifest/validate-manifest.js";
import { MANIFEST_SCHEMA } from "../../../src/manifest/manifest-schema.js";
import { BridgeError } from "../../../src/util/errors.js";
import type { Manifest } from "../../../src/manifest/types.js";
import { builtInManifest } from "../../support/hand-install.js";
import { implementedLinesPattern } from "../../support/verified-releases.js";

function invalid(fn: () => unknown): BridgeError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(BridgeError);
    expect((error as BridgeError).code).toBe("INVALID_MANIFEST");
    return error as BridgeError;
  }
  throw new Error("expected INVALID_MANIFEST");
}

/** every object path of a value, e.g. ["", "artifact", "artifact.hostIndex", …] */
function objectPaths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [];
  return [prefix, ...Object.entries(value).flatMap(([k, v]) => objectPaths(v, [...prefix, k]))];
}

describe("manifest schema and validation", () => {
  it("accepts every built-in manifest", async () => {
    const set = await loadManifests();
    expect(set.source).toBe("built-in");
    const files = (await readdir(builtInManifestDir())).filter((n) => n.endsWith(".json")).sort();
    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(set.manifests.map((m) => `zcode-${m.manifest.artifact.appVersion}.json`).sort()).toEqual(files);
  });

  it("is closed at every depth: an unknown field anywhere is refused and named", async () => {
    const base = await builtInManifest();
    const paths = objectPaths(base);
    expect(paths.length).toBe(14);
    for (const path of paths) {
      const copy = structuredClone(base) as unknown as Record<string, unknown>;
      let node = copy;
      for (const key of path) node = node[key] as Record<string, unknown>;
      node.surprise = true;
      const error = invalid(() => validateManifest(copy, "/m/x.json"));
      const field = [...path, "surprise"].join(".");
      expect(error.details).toMatchObject({ file: "/m/x.json", field });
      expect(error.message).toContain("/m/x.json");
      expect(error.message).toContain(`"${field}" is not a known field`);
    }
  });

  it("declares additionalProperties:false on every object schema", () => {
    const walk = (schema: unknown): number => {
      if (typeof schema !== "object" || schema === null) return 0;
      const s = schema as Record<string, unknown>;
      let count = 0;
      // a conditional object (the RPC module: pinned or first use) is closed by its then/else branches
      if (s.type === "object" && s.if === undefined) {
        expect(s.additionalProperties).toBe(false);
        // every field is required except the few documented optional ones
        const optional = Object.keys(s.properties as object).filter((k) => !(s.required as string[]).includes(k));
        expect(
          optional.every((k) =>
            ["trust", "acceptedAt", "acceptedBy", "exports", "modelSelection", "advisories", "fixedIn", "path"].includes(k),
          ),
        ).toBe(true);
        count++;
      }
      return count + Object.values(s).reduce<number>((n, v) => n + walk(v), 0);
    };
    expect(walk(MANIFEST_SCHEMA)).toBe(16); // one per object of the Manifest shape: the RPC module's two forms each once, an advisory
  });

  it("an RPC module is pinned (path + SHA-256) or left to first use (optionally with its path on record), never both", async () => {
    const base = await builtInManifest();
    const firstUse = (rpcModule: unknown): Manifest => ({ ...base, artifact: { ...base.artifact, rpcModule } }) as unknown as Manifest;
    expect(validateManifest(firstUse({ pin: "first-use" }), "a.json").artifact.rpcModule).toEqual({ pin: "first-use" });
    expect(validateManifest(firstUse({ pin: "first-use", path: "out/host/chunk-BMP2VTTL.js" }), "b.json").artifact.rpcModule.path).toBe(
      "out/host/chunk-BMP2VTTL.js",
    );
    const sha = base.artifact.cliSha256;
    expect(invalid(() => validateManifest(firstUse({ pin: "first-use", sha256: sha }), "c.json")).message).toContain(
      '"artifact.rpcModule.sha256" is not a known field',
    );
    expect(invalid(() => validateManifest(firstUse({ pin: "later" }), "d.json")).message).toContain(
      '"artifact.rpcModule.pin" must be "first-use"',
    );
    expect(invalid(() => validateManifest(firstUse({ path: "out/host/x.js" }), "e.json")).message).toContain(
      '"artifact.rpcModule.sha256" is missing',
    );
    const local = { ...firstUse({ pin: "first-use" }), trust: "local", acceptedAt: "2026-12-01T00:00:00Z", acceptedBy: "zcode-acp 1.0.0" };
    expect(invalid(() => validateManifest(local, "f.json")).details).toMatchObject({ field: "artifact.rpcModule.pin" });
  });

  it("names a missing field and a malformed value", async () => {
    const base = await builtInManifest();
    const missing = structuredClone(base) as unknown as { artifact: Record<string, unknown> };
    delete missing.artifact.cliSha256;
    expect(invalid(() => validateManifest(missing, "f.json")).details).toMatchObject({ field: "artifact.cliSha256" });
    const badSha = structuredClone(base);
    badSha.artifact.rpcModule.sha256 = "E66203598B60D8728260AD7631F295F9D6DEB8276B06E8F0CAB8776773C75B31";
    const error = invalid(() => validateManifest(badSha, "f.json"));
    expect(error.details).toMatchObject({ field: "artifact.rpcModule.sha256" });
    const badVersion = structuredClone(base);
    badVersion.artifact.appVersion = "3.11";
    expect(invalid(() => validateManifest(badVersion, "f.json")).details).toMatchObject({ field: "artifact.appVersion" });
    const schemaVersion = { ...structuredClone(base), schemaVersion: 2 };
    expect(invalid(() => validateManifest(schemaVersion, "f.json")).message).toContain('"schemaVersion" must be 1');
    const badMethod = structuredClone(base);
    const appended = badMethod.protocol.allowlist.agent.push("rm -rf") - 1;
    expect(invalid(() => validateManifest(badMethod, "f.json")).details).toMatchObject({ field: `protocol.allowlist.agent[${appended}]` });
  });

  it("refuses archive paths that could leave the archive", async () => {
    for (const path of [
      "../out/host/index.js",
      "/out/host/index.js",
      "out/../../x.js",
      "out\\host\\index.js",
      "./out/host/index.js",
      "out//index.js",
    ]) {
      const bad = await builtInManifest();
      bad.artifact.hostIndex.path = path;
      expect(invalid(() => validateManifest(bad, "f.json")).details).toMatchObject({ field: "artifact.hostIndex.path" });
    }
  });

  it("refuses an artifact whose protocolId does not name its protocol", async () => {
    const bad = await builtInManifest();
    bad.artifact.protocolId = "zcode-task-v2";
    const error = invalid(() => validateManifest(bad, "/m/mismatch.json"));
    expect(error.details).toMatchObject({ file: "/m/mismatch.json", field: "artifact.protocolId" });
    expect(error.message).toContain('"zcode-task-v2"');
    expect(error.message).toContain('"zcode-task-v1"');
  });

  it("refuses a release line this build does not implement, naming the implemented ones", async () => {
    const bad = await builtInManifest();
    bad.artifact.protocolId = bad.protocol.id = "zcode-task-v9";
    const error = invalid(() => validateManifest(bad, "/m/v9.json"));
    expect(error.details).toMatchObject({ file: "/m/v9.json", field: "protocol.id" });
    expect(error.message).toMatch(
      new RegExp(`"zcode-task-v9", a release line this zcode-acp does not implement \\(it implements ${implementedLinesPattern()}\\)`),
    );
  });

  it("refuses an allowlist entry, an event or a channel the line does not use, and a missing required method", async () => {
    const agentEnd = (await builtInManifest()).protocol.allowlist.agent.length;
    const cases: Array<[(m: Manifest) => void, string, RegExp]> = [
      [
        (m) => m.protocol.allowlist.agent.push("deleteAllData"),
        `protocol.allowlist.agent[${agentEnd}]`,
        /"deleteAllData" is not a method the zcode-task-v1 line uses/,
      ],
      [
        (m) => m.protocol.events.agent.push("onDynamicEverything"),
        "protocol.events.agent[1]",
        /"onDynamicEverything" is not an event the zcode-task-v1 line uses/,
      ],
      [
        (m) => {
          m.protocol.channels.modelSelection = "model-selection";
          m.protocol.allowlist.modelSelection = ["getView"];
          m.protocol.events.modelSelection = [];
        },
        "protocol.channels.modelSelection",
        /is not a channel of the zcode-task-v1 line/,
      ],
      [
        (m) => (m.protocol.channels.agent = "zcode-everything"),
        "protocol.channels.agent",
        /is "zcode-everything" but the zcode-task-v1 line uses "zcode-agent"/,
      ],
      [
        (m) => (m.protocol.allowlist.agent = m.protocol.allowlist.agent.filter((x) => x !== "sendPrompt")),
        "protocol.allowlist.agent",
        /lacks "sendPrompt", which the zcode-task-v1 line needs/,
      ],
    ];
    for (const [edit, field, message] of cases) {
      const bad = await builtInManifest();
      edit(bad);
      const error = invalid(() => validateManifest(bad, "/m/x.json"));
      expect(error.details, field).toMatchObject({ file: "/m/x.json", field });
      expect(error.message, field).toMatch(message);
    }
  });

  it("refuses an operation whose method is not allowlisted", async () => {
    const bad = await builtInManifest();
    bad.protocol.operations.cancelGeneration.method = "abortEverything";
    expect(invalid(() => validateManifest(bad, "f.json")).details).toMatchObject({ field: "protocol.operations.cancelGeneration.method" });
  });

  it("renders JSON pointers as dotted field paths", () => {
    expect(fieldPath("")).toBe("(root)");
    expect(fieldPath("/protocol/allowlist/agent/3")).toBe("protocol.allowlist.agent[3]");
    expect(fieldPath("/artifact", "x")).toBe("artifact.x");
  });
});

describe("loading manifests", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "zcode-acp-manifests-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("--manifest FILE replaces the built-in set", async () => {
    const m = await builtInManifest();
    m.artifact.id = "only-one";
    await writeFile(join(dir, "one.json"), JSON.stringify(m));
    const set = await loadManifests(join(dir, "one.json"));
    expect(set.manifests.map((x) => x.manifest.artifact.id)).toEqual(["only-one"]);
    expect(set.manifests[0]!.file).toBe(join(dir, "one.json"));
  });

  it("--manifest DIR loads every *.json in it, sorted", async () => {
    const a = await builtInManifest();
    const b = await builtInManifest();
    b.artifact.id = "b";
    await writeFile(join(dir, "b.json"), JSON.stringify(b));
    await writeFile(join(dir, "a.json"), JSON.stringify(a));
    await writeFile(join(dir, "notes.txt"), "ignored");
    const set = await loadManifests(dir);
    expect(set.manifests.map((x) => x.file)).toEqual([join(dir, "a.json"), join(dir, "b.json")]);
  });

  it("a bad file in the directory fails the whole load, naming that file", async () => {
    await writeFile(join(dir, "a.json"), JSON.stringify(await builtInManifest()));
    await writeFile(join(dir, "b.json"), "{ not json");
    await expect(loadManifests(dir)).rejects.toMatchObject({
      code: "INVALID_MANIFEST",
      details: { file: join(dir, "b.json"), field: "(root)" },
    });
  });

  it("refuses duplicate artifact ids", async () => {
    await writeFile(join(dir, "a.json"), JSON.stringify(await builtInManifest()));
    await writeFile(join(dir, "b.json"), JSON.stringify(await builtInManifest()));
    await expect(loadManifests(dir)).rejects.toMatchObject({
      code: "INVALID_MANIFEST",
      details: { file: join(dir, "b.json"), field: "artifact.id" },
    });
  });

  it("an empty directory is an invalid manifest set; a missing path is a usage error", async () => {
    await mkdir(join(dir, "empty"));
    await expect(loadManifests(join(dir, "empty"))).rejects.toMatchObject({ code: "INVALID_MANIFEST" });
    await expect(loadManifests(join(dir, "nope.json"))).rejects.toMatchObject({ code: "USAGE" });
  });
});
