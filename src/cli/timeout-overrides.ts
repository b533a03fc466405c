/**
 * `ZCODE_ACP_TIMEOUTS_MS`: overrides of the host timeout table (src/host/timeouts.ts) as a JSON
 * object of positive milliseconds, e.g. `{"startup":500,"cancel":300}`. Meant for
 * fault tests and unusual machines; anything invalid is reported to `warn` and ignored (the defaults stay).
 */
import type { Logger } from "../log/logger.js";
import { DEFAULT_TIMEOUTS_MS, isTimeoutKey } from "../host/timeouts.js";

/** the longest timeout an override may set: one hour */
export const MAX_TIMEOUT_OVERRIDE_MS = 3_600_000;

export function timeoutOverridesFrom(env: NodeJS.ProcessEnv, logger: Pick<Logger, "warn">): Record<string, number> {
  const raw = env.ZCODE_ACP_TIMEOUTS_MS;
  if (raw === undefined || raw.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    logger.warn("ZCODE_ACP_TIMEOUTS_MS is not JSON; using the default timeouts");
    return {};
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    logger.warn("ZCODE_ACP_TIMEOUTS_MS must be a JSON object of milliseconds; using the default timeouts");
    return {};
  }
  const overrides: Record<string, number> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!isTimeoutKey(key))
      logger.warn("ZCODE_ACP_TIMEOUTS_MS: ignored an unknown timeout name", { key, known: Object.keys(DEFAULT_TIMEOUTS_MS).join(", ") });
    else if (typeof value === "number" && Number.isInteger(value) && value > 0 && value <= MAX_TIMEOUT_OVERRIDE_MS) overrides[key] = value;
    else logger.warn("ZCODE_ACP_TIMEOUTS_MS: ignored an invalid timeout", { key, value: String(value) });
  }
  return overrides;
}
