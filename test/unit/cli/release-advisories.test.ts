/** The advisories of the release the bridge runs on (adr/0021): logged once, warnings become notices. */
import { describe, expect, it } from "vitest";
import { advisoryNotice, ReleaseAdvisories } from "../../../src/cli/release-advisories.js";
import type { Advisory, Assessment } from "../../../src/compat/types.js";
import type { Logger } from "../../../src/log/logger.js";

const WARNING: Advisory = {
  id: "w",
  severity: "warning",
  summary: "Something happens.",
  action: "Update.",
  source: "https://example.com/w",
  fixedIn: "9.0.0",
};
const INFO: Advisory = { id: "i", severity: "info", summary: "Good to know.", action: "Nothing.", source: "https://example.com/i" };

function recorder(): { logger: Logger; records: Array<{ level: string; message: string; fields?: Record<string, unknown> }> } {
  const records: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  const logger: Logger = {
    level: "debug",
    error: (message, fields) => records.push({ level: "error", message, ...(fields ? { fields } : {}) }),
    warn: (message, fields) => records.push({ level: "warn", message, ...(fields ? { fields } : {}) }),
    info: (message, fields) => records.push({ level: "info", message, ...(fields ? { fields } : {}) }),
    debug: (message, fields) => records.push({ level: "debug", message, ...(fields ? { fields } : {}) }),
    child: () => logger,
  };
  return { logger, records };
}

const assessment = (supported: boolean, advisories: Advisory[], appVersion = "3.11.2"): Assessment => ({
  supported,
  message: "",
  steps: [],
  diagnostics: {},
  appVersion,
  advisories,
});

describe("ReleaseAdvisories", () => {
  it("logs each advisory once per release (warn / info), however often the install is assessed", () => {
    const { logger, records } = recorder();
    const advisories = new ReleaseAdvisories(logger);
    advisories.observe(assessment(true, [WARNING, INFO]));
    advisories.observe(assessment(true, [WARNING, INFO]));
    expect(records.map((r) => [r.level, r.message])).toEqual([
      ["warn", "release advisory: Something happens."],
      ["info", "release advisory: Good to know."],
    ]);
    expect(records[0]!.fields).toEqual({
      release: "3.11.2",
      id: "w",
      action: "Update.",
      fixedIn: "9.0.0",
      source: "https://example.com/w",
    });
  });

  it("the notices are the warnings of the last supported assessment; an unsupported one changes nothing", () => {
    const advisories = new ReleaseAdvisories(recorder().logger);
    expect(advisories.notices()).toEqual([]);
    advisories.observe(assessment(true, [WARNING, INFO]));
    expect(advisories.notices()).toEqual([advisoryNotice(WARNING)]);
    advisories.observe(assessment(false, []));
    expect(advisories.notices()).toEqual([advisoryNotice(WARNING)]);
    advisories.observe(assessment(true, [], "3.14.0")); // updated ZCode, host restarted
    expect(advisories.notices()).toEqual([]);
  });

  it("a notice states what to do, the fixing release and the source", () => {
    expect(advisoryNotice(WARNING)).toEqual({
      id: "w",
      title: "Something happens.",
      description: "What you can do: Update. Fixed in ZCode 9.0.0. Source: https://example.com/w",
    });
    const { fixedIn: _fixed, ...unfixed } = WARNING;
    expect(advisoryNotice(unfixed).description).toBe("What you can do: Update. Source: https://example.com/w");
  });
});
