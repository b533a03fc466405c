/** The machine a benchmark ran on: Node version, CPU model, cores, load average at the start. */
import { cpus, loadavg, platform, arch, totalmem } from "node:os";

export interface MachineInfo {
  date: string;
  node: string;
  platform: string;
  cpuModel: string;
  cores: number;
  memory: string;
  /** 1, 5 and 15 minute load averages when the run started */
  loadAverage: [number, number, number];
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  const [one, five, fifteen] = loadavg();
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    node: process.version,
    platform: `${platform()}-${arch()}`,
    cpuModel: list[0]?.model.trim() ?? "unknown",
    cores: list.length,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    loadAverage: [one ?? 0, five ?? 0, fifteen ?? 0],
  };
}

export function describeMachine(info: MachineInfo): string {
  const load = info.loadAverage.map((l) => l.toFixed(2)).join(" / ");
  return `Node ${info.node}, ${info.cpuModel} × ${info.cores} cores, ${info.memory} RAM, ${info.platform}; load average at start ${load} (1/5/15 min)`;
}
