/**
 * What a verified install has pinned, file by file (adr/0020): the two files zcode-acp imports —
 * the host entry and the RPC module — are pinned (public fingerprint, the given manifest, a local
 * acceptance, or first use); the Electron executable, the other host chunks, the agent CLI and the
 * builtin provider config are not (the CLI's SHA-256 is compared, as a diagnostic only).
 */
import type { FilePinning, PinHow } from "./types.js";

/** How the selected manifest pins what it pins: built-in (public fingerprints), given with --manifest, or accepted locally. */
export type ManifestKind = { kind: "built-in" } | { kind: "given" } | { kind: "local"; acceptedOn: string };

export function manifestPinHow(kind: ManifestKind): { how: PinHow; on?: string } {
  switch (kind.kind) {
    case "built-in":
      return { how: "public fingerprint" };
    case "given":
      return { how: "pinned by the given manifest" };
    case "local":
      return { how: "accepted locally", on: kind.acceptedOn };
  }
}

/** the files a verified install does not pin, and why */
export function unpinnedFiles(line: { needsBuiltinProviderConfig: boolean }): FilePinning[] {
  const files: FilePinning[] = [
    { what: "executable", how: "not pinned", note: "the Electron executable differs per platform; no public fingerprint covers it" },
    { what: "other host chunks", how: "not pinned", note: "loaded by the host entry; zcode-acp does not import them" },
    {
      what: "agent CLI",
      path: "glm/zcode.cjs",
      how: "not pinned",
      note: "run by the host, never by zcode-acp; its SHA-256 is compared as a diagnostic",
    },
  ];
  if (line.needsBuiltinProviderConfig) {
    files.push({
      what: "builtin provider config",
      how: "not pinned",
      note: "read by the host; its path is checked to stay inside the install",
    });
  }
  return files;
}

/** "host entry: public fingerprint; RPC module: pinned on first use on 2026-12-03; executable: not pinned; …" */
export function describePinning(files: readonly FilePinning[]): string {
  return files.map((f) => `${f.what}: ${f.how}${f.on !== undefined ? ` on ${f.on}` : ""}`).join("; ");
}
