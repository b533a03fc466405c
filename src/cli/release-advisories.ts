/**
 * The advisories of the release the bridge runs on (adr/0021): taken from each install assessment
 * of the `acp` command (the warm-up's or the launch's), logged once per advisory and release, and
 * handed to the ACP layer as the notices of its sessions (warning level only).
 */
import type { ReleaseNotice } from "../acp/release-notices.js";
import type { Advisory, Assessment } from "../compat/types.js";
import type { Logger } from "../log/logger.js";

/** The text a client shows for one advisory: what to do, the fixing release, the source. */
export function advisoryNotice(advisory: Advisory): ReleaseNotice {
  const fixed = advisory.fixedIn !== undefined ? ` Fixed in ZCode ${advisory.fixedIn}.` : "";
  return {
    id: advisory.id,
    title: advisory.summary,
    description: `What you can do: ${advisory.action}${fixed} Source: ${advisory.source}`,
  };
}

export class ReleaseAdvisories {
  private current: readonly Advisory[] = [];
  private readonly logged = new Set<string>();

  constructor(private readonly logger: Logger) {}

  /** Record the advisories of an assessment (a supported one; others change nothing) and log new ones. */
  observe(assessment: Assessment): void {
    if (!assessment.supported) return;
    this.current = assessment.advisories ?? [];
    for (const advisory of this.current) {
      const key = `${assessment.appVersion ?? "?"}\u0000${advisory.id}`;
      if (this.logged.has(key)) continue;
      this.logged.add(key);
      const fields = {
        release: assessment.appVersion,
        id: advisory.id,
        action: advisory.action,
        fixedIn: advisory.fixedIn,
        source: advisory.source,
      };
      const message = `release advisory: ${advisory.summary}`;
      if (advisory.severity === "warning") this.logger.warn(message, fields);
      else this.logger.info(message, fields);
    }
  }

  /** the warning-level advisories of the release last assessed, as session notices */
  notices(): ReleaseNotice[] {
    return this.current.filter((advisory) => advisory.severity === "warning").map(advisoryNotice);
  }
}
