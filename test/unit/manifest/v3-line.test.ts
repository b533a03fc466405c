import { describe, expect, it } from "vitest";
import { validateManifest } from "../../../src/manifest/validate-manifest.js";
import { findLine, V4_COMMAND_TYPES } from "../../../src/manifest/release-lines.js";
import type { Manifest } from "../../../src/manifest/types.js";
import { BridgeError } from "../../../src/util/errors.js";
import { builtInManifest } from "../../support/hand-install.js";

/** a 4.0.0 manifest as the zcode-task-v3 line wants it: no legacy prompt, event or answer calls */
async function v3Manifest(): Promise<Manifest> {
  const base = structuredClone(await builtInManifest());
  const line = findLine("zcode-task-v3")!;
  base.protocol.id = "zcode-task-v3";
  base.artifact.protocolId = "zcode-task-v3";
  base.protocol.channels = { agent: "zcode-agent", task: "zcode-task", modelSelection: "model-selection" };
  base.protocol.allowlist = { agent: [...line.methods.agent!], task: [], modelSelection: ["getView"] };
  base.protocol.events = { agent: [...line.events.agent!], task: [], modelSelection: [] };
  const never = { service: "agent", method: "sendConversationCommandV4", sessionKey: "sessionId" } as const;
  base.protocol.operations = { cancelGeneration: never, respondStructuredInput: never, respondPermission: never };
  return base;
}

describe("release line zcode-task-v3 (ZCode 4.0.0)", () => {
  it("needs no legacy prompt, event or zcode-task answer, and every V4 call the bridge makes", () => {
    const line = findLine("zcode-task-v3")!;
    const all = [...line.methods.agent!];
    for (const legacy of ["sendPrompt", "readSessionMessages", "readSessionEvents"]) expect(all).not.toContain(legacy);
    // the frames, and the provider header requests (not V4: zcode-v4.md §5.4), the request side only
    expect(line.events.agent).toEqual(["onDynamicConversationFrame", "onDynamicWorkspaceProviderRuntimeHeadersRequest"]);
    expect(line.projections["agent.onDynamicWorkspaceProviderRuntimeHeadersRequest"]).toBe("provider-headers-request");
    expect(line.requiredMethods.task).toEqual([]);
    expect(line.requiredMethods.agent).toEqual(
      expect.arrayContaining([
        "helloConversationV4",
        "initializeConversationV4",
        "sendConversationCommandV4",
        "subscribeConversationV4",
        "resyncConversationV4",
        "unsubscribeConversationV4",
        "conversationRowsRangeV4",
        "respondProviderRuntimeHeaders",
      ]),
    );
    expect(V4_COMMAND_TYPES).toContain("resolveInteraction");
    expect(line.projections["agent.onDynamicConversationFrame"]).toBe("conversation-frame");
    expect(line.projections["agent.conversationRowsRangeV4"]).toBe("conversation-rows");
  });

  it("accepts a 4.0.0 manifest and refuses one lacking a V4 read call, naming it", async () => {
    const manifest = await v3Manifest();
    expect(validateManifest(manifest, "/m/zcode-4.0.0.json").protocol.id).toBe("zcode-task-v3");
    const lacking = structuredClone(manifest);
    lacking.protocol.allowlist.agent = lacking.protocol.allowlist.agent.filter((m) => m !== "subscribeConversationV4");
    let error: unknown;
    try {
      validateManifest(lacking, "/m/zcode-4.0.0.json");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BridgeError);
    expect((error as BridgeError).message).toContain('lacks "subscribeConversationV4", which the zcode-task-v3 line needs');
    const legacy = structuredClone(manifest);
    legacy.protocol.events.agent = ["onDynamicSessionEvent"];
    expect(() => validateManifest(legacy, "/m/zcode-4.0.0.json")).toThrow(
      /onDynamicSessionEvent" is not an event the zcode-task-v3 line uses/,
    );
  });
});
