// TEMPORARY: hand install until fixtures/sim-install.ts lands
import { createHandSim } from "./hand-install.js";
export const createSimulatedInstall = (o: { packed?: boolean; appVersion?: string; platform?: "linux" | "darwin"; arch?: string; archivePaddingBytes?: number } = {}) => createHandSim(o);
