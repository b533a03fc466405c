/** The bridge's single mode of a v2-family session: `{mode: <editing>, planEnabled}` (docs/zcode-host.md §13.5). */
export const PLAN = "plan";

/** `{mode: <editing>, planEnabled}` → the bridge's single mode ("plan" while plan is on). */
export function bridgeMode(editing: unknown, planEnabled: unknown): string | undefined {
  if (planEnabled === true) return PLAN;
  return typeof editing === "string" && editing !== "" ? editing : undefined;
}
