/** Resident memory of a process from /proc/<pid>/status (Linux): current and peak (high-water mark). */
import { readFileSync, readdirSync } from "node:fs";

export interface MemorySample {
  rssBytes: number;
  hwmBytes: number;
}

export function readMemory(pid: number): MemorySample | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rssBytes: kib("VmRSS"), hwmBytes: kib("VmHWM") };
}

/** Child pids of `pid` (from /proc/<n>/stat). */
export function childPids(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** Samples the RSS of a process every `intervalMs`; keeps the maximum and the last high-water mark. */
export class MemorySampler {
  maxRssBytes = 0;
  hwmBytes = 0;
  samples = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: () => number | undefined,
    intervalMs = 25,
  ) {
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  sample(): void {
    const pid = this.pid();
    if (pid === undefined) return;
    const memory = readMemory(pid);
    if (!memory) return;
    this.samples += 1;
    this.maxRssBytes = Math.max(this.maxRssBytes, memory.rssBytes);
    if (Number.isFinite(memory.hwmBytes)) this.hwmBytes = Math.max(this.hwmBytes, memory.hwmBytes);
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}
