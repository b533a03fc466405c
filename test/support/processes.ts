/** Process-table helpers for tests (Linux /proc): live processes of a simulated install. */
import { existsSync, readFileSync, readdirSync } from "node:fs";

/** true when `pid` is a live (non-zombie) process */
export function processAlive(pid: number): boolean {
  if (!existsSync("/proc/self/stat")) {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** pids of live processes whose command line mentions `text` (the install root: the host and its stand-in) */
export function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text) && processAlive(Number(entry))) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
