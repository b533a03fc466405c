import { describe, expect, it } from "vitest";
import { CurrentLineApi } from "../../../src/native/current-line-api.js";
import { FakeHost } from "../../support/fake-host.js";

describe("CurrentLineApi: the current line's API", () => {
  it("chooses the line again after the host exits: the first call after a relaunch uses the install's new line", async () => {
    const host = new FakeHost({ calls: "null", incarnation: 1 });
    const native = new CurrentLineApi(host);
    await native.checkSignIn("/w").catch(() => undefined);
    expect(native.lineId).toBe("zcode-task-v1");
    // ZCode was updated to a v2 release while the bridge ran; the host exits and is started again
    host.exit();
    host.lineId = "zcode-task-v2";
    const before = host.calls.length;
    await native.checkSignIn("/w").catch(() => undefined);
    expect(native.lineId).toBe("zcode-task-v2");
    expect(host.calls.slice(before).map((c) => c.method)).not.toContain("readWorkspaceState");
  });
});
