/**
 * The shipped manifests carry exactly the public fingerprints docs/releases.md lists with their
 * sources: one row per manifest and one manifest per row, CLI version, CLI SHA-256, host entry
 * SHA-256 and the RPC module (path and SHA-256, or first use with the path on record) equal.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { pinnedManifests } from "../../support/verified-releases.js";

const DOC = fileURLToPath(new URL("../../../docs/releases.md", import.meta.url));

interface Row {
  release: string;
  cli: string;
  cliSha256: string;
  hostSha256: string;
  rpc: string;
}

/** the rows of the "Fingerprints" table */
function docRows(): Row[] {
  const text = readFileSync(DOC, "utf8");
  const section = text.slice(text.indexOf("## Fingerprints"), text.indexOf("## Sources"));
  const lines = section.split("\n").filter((l) => /^\| \d+\.\d+\.\d+ \|/.test(l));
  return lines.map((line) => {
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim().replace(/`/g, ""));
    expect(cells, line).toHaveLength(6);
    const [release, , cli, cliSha256, hostSha256, rpc] = cells as [string, string, string, string, string, string];
    return { release, cli, cliSha256, hostSha256, rpc };
  });
}

/** the RPC module cell a manifest implies: "path sha256", "first use" or "first use, path" */
function rpcCell(rpcModule: { path?: string; sha256?: string; pin?: string }): string {
  if (rpcModule.pin === "first-use") return rpcModule.path === undefined ? "first use" : `first use, ${rpcModule.path}`;
  return `${rpcModule.path} ${rpcModule.sha256}`;
}

describe("docs/releases.md and manifests/", () => {
  it("list the same releases with exactly the same fingerprints", () => {
    const rows = docRows();
    const manifests = pinnedManifests();
    expect(rows.map((r) => r.release)).toEqual(manifests.map((m) => m.manifest.artifact.appVersion));
    for (const { file, manifest } of manifests) {
      const row = rows.find((r) => r.release === manifest.artifact.appVersion)!;
      expect(
        {
          release: manifest.artifact.appVersion,
          cli: manifest.artifact.cliVersion,
          cliSha256: manifest.artifact.cliSha256,
          hostSha256: manifest.artifact.hostIndex.sha256,
          rpc: rpcCell(manifest.artifact.rpcModule),
        },
        file,
      ).toEqual(row);
      for (const sha of [row.cliSha256, row.hostSha256]) expect(sha).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it("the 3.14 releases pin the host entry and leave the RPC module to first use (no public RPC fingerprint)", () => {
    const recent = pinnedManifests().filter((m) => m.manifest.artifact.appVersion.startsWith("3.14."));
    expect(recent.map((m) => m.manifest.artifact.appVersion)).toEqual(["3.14.0", "3.14.3", "3.14.4"]);
    for (const { manifest } of recent) {
      expect(manifest.artifact.rpcModule.pin).toBe("first-use");
      expect(manifest.protocol.id).toBe("zcode-task-v2");
      expect(manifest.artifact.hostIndex.path).toBe("out/host/index.js");
    }
  });
});
