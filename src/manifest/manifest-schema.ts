/**
 * The closed JSON Schema of a manifest (docs/runtime-contract.md §2): exactly the `Manifest` shape of
 * src/compat/types.ts, every object closed with `additionalProperties: false`, every field required.
 */
/** the `cliVersion` of a local manifest whose CLI version could not be read without running it */
export const UNKNOWN_CLI_VERSION = "unknown";
const identifier = { type: "string", pattern: "^[A-Za-z_$][A-Za-z0-9_$]*$" } as const;
const descriptorId = { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$" } as const;
const semver = {
  type: "string",
  pattern: "^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?$",
} as const;
const sha256 = { type: "string", pattern: "^[0-9a-f]{64}$" } as const;
/** a relative POSIX path inside the app archive: no leading slash, no "." or ".." segment, no backslash */
const archivePath = {
  type: "string",
  pattern: "^(?!\\.{1,2}(?:/|$))[A-Za-z0-9_@+-][A-Za-z0-9._@+-]*(?:/(?!\\.{1,2}(?:/|$))[A-Za-z0-9._@+-]+)*$",
  maxLength: 512,
} as const;
const nonEmpty = { type: "string", minLength: 1, maxLength: 512 } as const;

function closed(properties: Record<string, unknown>, optional: readonly string[] = []): Record<string, unknown> {
  const required = Object.keys(properties).filter((key) => !optional.includes(key));
  return { type: "object", additionalProperties: false, required, properties };
}

const fileFingerprint = closed({ path: archivePath, sha256 });
/**
 * The RPC module: pinned like any file, or `pin: "first-use"` (adr/0020) with the path where a
 * public record names it; a first-use module never carries a SHA-256 (it is recorded locally).
 */
const rpcModuleFingerprint = {
  type: "object",
  if: { properties: { pin: true }, required: ["pin"] },
  then: closed({ pin: { const: "first-use" }, path: archivePath }, ["path"]),
  else: fileFingerprint,
} as const;
const methodList = { type: "array", uniqueItems: true, items: identifier, maxItems: 256 } as const;
const operation = closed({ service: { enum: ["agent", "task"] }, method: identifier, sessionKey: identifier });
/** per-channel lists: `agent` and `task` on every line, `modelSelection` where the line has it */
const perChannel = (item: unknown) => closed({ agent: item, task: item, modelSelection: item }, ["modelSelection"]);
/** one line of text for people: no line breaks */
const oneLine = (maxLength: number) => ({ type: "string", minLength: 1, maxLength, pattern: "^[^\\r\\n]+$" }) as const;
/** a release advisory (adr/0021): a public fact about this release, with its source; `fixedIn` absent: no release fixes it yet */
const advisory = closed(
  {
    id: { type: "string", pattern: "^[a-z0-9][a-z0-9-]{0,63}$" },
    severity: { enum: ["info", "warning"] },
    summary: oneLine(300),
    action: oneLine(500),
    source: { type: "string", pattern: "^https://[^\\s]+$", maxLength: 500 },
    fixedIn: semver,
  },
  ["fixedIn"],
);

export const MANIFEST_SCHEMA = {
  $schema: "http://json-schema.org/draft-07/schema#",
  $id: "https://zcode-acp.invalid/schemas/manifest-v1.json",
  title: "zcode-acp manifest of one verified ZCode release",
  ...closed(
    {
      schemaVersion: { const: 1 },
      /** absent: a pinned manifest of this package; "local": accepted by the user with `zcode-acp onboard --accept` */
      trust: { enum: ["local"] },
      /** local manifests: when they were accepted (ISO 8601) and by which zcode-acp version */
      acceptedAt: { type: "string", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$", maxLength: 64 },
      acceptedBy: nonEmpty,
      artifact: closed(
        {
          id: descriptorId,
          appVersion: semver,
          /** "unknown": an onboarded build whose CLI declares no single version (its SHA-256 is pinned all the same) */
          cliVersion: { anyOf: [semver, { const: UNKNOWN_CLI_VERSION }] },
          cliSha256: sha256,
          protocolId: descriptorId,
          hostIndex: fileFingerprint,
          rpcModule: rpcModuleFingerprint,
          /** pinned export names; absent: the roles are found by shape (the module's SHA-256 is pinned either way) */
          exports: closed({ protocol: identifier, client: identifier, service: identifier }),
          metadata: closed({ runtime: nonEmpty, entry: nonEmpty, source: nonEmpty }),
        },
        ["exports"],
      ),
      protocol: closed({
        id: descriptorId,
        channels: perChannel(nonEmpty),
        operations: closed({
          cancelGeneration: operation,
          respondStructuredInput: operation,
          respondPermission: operation,
        }),
        allowlist: perChannel(methodList),
        events: perChannel(methodList),
      }),
      /** release advisories (adr/0021); absent: none */
      advisories: { type: "array", items: advisory, maxItems: 16 },
    },
    ["trust", "acceptedAt", "acceptedBy", "advisories"],
  ),
} as const;
