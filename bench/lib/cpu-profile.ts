/** Summary of a V8 .cpuprofile: self time per function (name, file:line), the top entries. */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { bundledInput } from "./bundle-map.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface HotFunction {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

/** node_modules/<package>/… for dependencies, dist/… or src/… for ours, node:… as it is */
function shortUrl(url: string): string {
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) return url.slice(modules + 1).replace(/^node_modules\/(@[^/]+\/[^/]+|[^/]+)\/(?:dist\/)?/, "$1/");
  return url.replace(/^.*\/(dist|src)\//, "$1/");
}

export async function hotFunctions(file: string, top = 25): Promise<{ totalMs: number; functions: HotFunction[] }> {
  const profile = JSON.parse(await readFile(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = (profile.timeDeltas[i] ?? 0) / 1000;
    total += delta;
    const frame = byId.get(id)?.callFrame;
    if (!frame) return;
    const where = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : "";
    const key = `${frame.functionName || "(anonymous)"}\t${where}`;
    self.set(key, (self.get(key) ?? 0) + delta);
  });
  const functions = [...self.entries()]
    .map(([key, ms]) => {
      const [name, where] = key.split("\t");
      return { name: name ?? "", where: where ?? "", selfMs: ms, share: ms / total };
    })
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, top);
  return { totalMs: total, functions };
}

/** file:line of a frame; a frame in a bundled chunk names the input module it came from */
function frameWhere(frame: ProfileNode["callFrame"]): string {
  if (!frame.url) return "";
  const line = frame.lineNumber + 1;
  if (/\/dist\/cli\/[^/]+\.js$/.test(frame.url) && frame.url.startsWith("file://")) {
    const input = bundledInput(fileURLToPath(frame.url), line);
    if (input)
      return input.startsWith("node_modules/") ? `${shortUrl(`/${input}`)}:bundled` : `${input.replace(/^build\/tsc\//, "dist/")}:bundled`;
  }
  return `${shortUrl(frame.url)}:${line}`;
}

export interface WindowSelfTime {
  /** ms of samples in the window */
  totalMs: number;
  /** self ms by "function\twhere" */
  self: Map<string, number>;
}

/**
 * Self time per function in consecutive time windows of one profile. `cutsUs` are absolute
 * times on the profile's clock (V8's monotonic clock, in µs: the same clock as
 * process.hrtime.bigint() / 1000n on Linux); samples before the first cut fall in window 0, …
 */
export async function selfTimeByWindow(file: string, cutsUs: readonly number[]): Promise<WindowSelfTime[]> {
  const profile = JSON.parse(await readFile(file, "utf8")) as Profile & { startTime: number };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const windows: WindowSelfTime[] = Array.from({ length: cutsUs.length + 1 }, () => ({ totalMs: 0, self: new Map() }));
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const deltaUs = profile.timeDeltas[i] ?? 0;
    t += deltaUs;
    let w = 0;
    while (w < cutsUs.length && t > cutsUs[w]!) w++;
    const window = windows[w]!;
    const ms = deltaUs / 1000;
    window.totalMs += ms;
    const frame = byId.get(id)?.callFrame;
    if (!frame) return;
    const key = `${frame.functionName || "(anonymous)"}\t${frameWhere(frame)}`;
    window.self.set(key, (window.self.get(key) ?? 0) + ms);
  });
  return windows;
}
