// The check tests use the shared simulated-install generator of fixtures/.
export { createSimulatedInstall } from "../../fixtures/sim-install.js";
