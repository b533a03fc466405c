/**
 * A timeline of one start-up from the CLI's own diagnostic log: the CLI runs initialize and
 * session/new with a debug log file, and every record of the bridge (not the host's output) is
 * placed in ms after the spawn. Log times have millisecond resolution.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BridgeClient } from "./bridge-client.js";

export interface TimelineEntry {
  ms: number;
  scope: string;
  msg: string;
}

export interface Timeline {
  initializeMs: number;
  sessionNewMs: number;
  entries: TimelineEntry[];
}

const HOST_OUTPUT = new Set(["host output", "host runtime"]);

export async function startupTimeline(env: NodeJS.ProcessEnv, node?: string): Promise<Timeline> {
  const dir = await mkdtemp(join(tmpdir(), "zcode-acp-bench-timeline-"));
  const log = join(dir, "bridge.log");
  const spawnedWall = Date.now();
  const client = BridgeClient.start({ env: { ...env, ZCODE_ACP_LOG_FILE: log, ZCODE_ACP_LOG_LEVEL: "debug" }, ...(node ? { node } : {}) });
  let initializeMs: number;
  let sessionNewMs: number;
  try {
    await client.initialize();
    initializeMs = performance.now() - client.spawnedAt;
    await client.newSession(dir);
    sessionNewMs = performance.now() - client.spawnedAt;
  } finally {
    await client.close();
  }
  const entries: TimelineEntry[] = [];
  for (const line of (await readFile(log, "utf8")).split("\n")) {
    if (line === "") continue;
    const record = JSON.parse(line) as { t: string; msg: string; scope?: string };
    const ms = Date.parse(record.t) - spawnedWall;
    if (HOST_OUTPUT.has(record.msg) || ms > sessionNewMs + 1) continue;
    entries.push({ ms, scope: record.scope ?? "", msg: record.msg });
  }
  await rm(dir, { recursive: true, force: true });
  return { initializeMs, sessionNewMs, entries };
}
