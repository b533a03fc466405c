/**
 * The allowlist of an onboarded build: the nearest pinned release's, less what this build's host
 * bundle does not name. The line's required methods are named (the line was chosen for that:
 * ./line-evidence.ts); any other method stays only when the bundle names it, and the V4 input
 * methods only all together, since the line's API sends prompts through V4 when the allowlist has
 * them (adr/0022) and a build with part of them would fail its first prompt.
 */
import {
  CONTEXT_COMPOSITION_METHOD,
  V4_FRAME_EVENT,
  V4_INPUT_METHODS,
  V4_READ_METHODS,
  type ReleaseLine,
} from "../manifest/release-lines.js";
import type { PerChannel, ProtocolDescriptor } from "../manifest/types.js";

export interface AllowedMethods {
  /** the base descriptor with the allowlist reduced */
  protocol: ProtocolDescriptor;
  /** "named": the build names every V4 input method (they stay); "absent": left out; "not in base": the base has none */
  v4: "named" | "absent" | "not in base";
  /** V4 input methods the bundle does not name (when `v4` is "absent") */
  v4Missing: string[];
  /** other optional methods left out because the bundle does not name them */
  leftOut: string[];
  /** optional calls of newer releases the base lacks, added because the bundle names them (getContextComposition) */
  added: string[];
}

/**
 * Optional calls a newer release of a line adds, which the nearest pinned release may lack: allowed
 * when the line knows them and the host bundle names them (ZCode 3.18's getContextComposition; the
 * bridge reads it fail-soft, so a build that names it without serving it only logs).
 */
const NEWER_OPTIONAL: Readonly<Partial<Record<keyof PerChannel<string[]>, readonly string[]>>> = { agent: [CONTEXT_COMPOSITION_METHOD] };

const V4 = new Set<string>(V4_INPUT_METHODS);

export function allowedMethods(base: ProtocolDescriptor, line: ReleaseLine, bundle: string): AllowedMethods {
  const protocol = structuredClone(base);
  const agent = base.allowlist.agent;
  const v4InBase = V4_INPUT_METHODS.every((m) => agent.includes(m));
  const v4Missing = v4InBase ? V4_INPUT_METHODS.filter((m) => !bundle.includes(m)) : [];
  const keepV4 = v4InBase && v4Missing.length === 0;
  const leftOut: string[] = [];
  const channels = Object.keys(base.allowlist) as (keyof PerChannel<string[]>)[];
  for (const channel of channels) {
    const required = new Set(line.requiredMethods[channel] ?? []);
    const methods = base.allowlist[channel] ?? [];
    protocol.allowlist[channel] = methods.filter((method) => {
      if (required.has(method)) return true;
      if (V4.has(method)) return keepV4;
      if (bundle.includes(method)) return true;
      leftOut.push(method);
      return false;
    });
  }
  const added: string[] = [];
  for (const [channel, methods] of Object.entries(NEWER_OPTIONAL) as [keyof PerChannel<string[]>, readonly string[]][]) {
    const list = protocol.allowlist[channel];
    if (list === undefined) continue;
    for (const method of methods)
      if (!list.includes(method) && (line.methods[channel] ?? []).includes(method) && bundle.includes(method)) {
        list.push(method);
        added.push(method);
      }
  }
  // V4 reading needs the V4 handshake, which is part of the V4 input: only beside it
  if (keepV4) added.push(...addV4Read(protocol, line, bundle));
  return { protocol, v4: !v4InBase ? "not in base" : keepV4 ? "named" : "absent", v4Missing, leftOut, added };
}

/**
 * The V4 read path (its calls and frame event, all together) where the line has it, the bundle
 * names all of it and the V4 input (whose handshake it needs) stays, though the base lacks it: the upper bound the bridge falls back to when the
 * running host does not serve the legacy session stream (adr/0033). Read only then: while the host
 * serves the legacy stream, sessions are read through it.
 */
function addV4Read(protocol: ProtocolDescriptor, line: ReleaseLine, bundle: string): string[] {
  const names = [...V4_READ_METHODS, V4_FRAME_EVENT];
  const lineHas =
    V4_READ_METHODS.every((m) => (line.methods.agent ?? []).includes(m)) && (line.events.agent ?? []).includes(V4_FRAME_EVENT);
  if (!lineHas || !names.every((name) => bundle.includes(name))) return [];
  const added: string[] = [];
  for (const method of V4_READ_METHODS)
    if (!protocol.allowlist.agent.includes(method)) {
      protocol.allowlist.agent.push(method);
      added.push(method);
    }
  if (!protocol.events.agent.includes(V4_FRAME_EVENT)) {
    protocol.events.agent.push(V4_FRAME_EVENT);
    added.push(V4_FRAME_EVENT);
  }
  return added;
}

/** What the review says about the allowlist (one line each). */
export function describeAllowed(allowed: AllowedMethods): string[] {
  const out: string[] = ["every required method of the line is named in the host bundle"];
  if (allowed.v4 === "named")
    out.push("V4 input (the conversation commands and uploads) is named in the host bundle: prompts go through sendText");
  if (allowed.v4 === "absent")
    out.push(
      `V4 input left out: the host bundle does not name ${allowed.v4Missing.join(", ")}; ` +
        "prompts go through sendPrompt, without steering or queueing",
    );
  if (allowed.leftOut.length > 0) out.push(`left out, not named in the host bundle: ${allowed.leftOut.join(", ")}`);
  if (allowed.added.length > 0)
    out.push(`added, named in the host bundle (newer than the nearest pinned release): ${allowed.added.join(", ")}`);
  return out;
}
