/**
 * What the ACP registry's protocol matrix (and any client) sees of model switching, close, and an
 * install that cannot be used (src/acp/session-models.ts, src/acp/request-errors.ts):
 * - `models` {availableModels, currentModelId} in the session/new, load and resume answers, the
 *   same values as the `category: "model"` config option; `session/set_model` changes the model
 *   natively as session/set_config_option does; an unknown model is -32602, an unknown session -32002;
 * - `session/close` of an unknown or already closed session is `{}`, and closes nothing natively;
 * - without a usable ZCode (none at the path, not the verified build) every session call is
 *   `auth_required` (-32000) with the reason and what to do, never an internal error.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { e2e, forSession } from "../../support/e2e-harness.js";

const t = e2e();

describe("e2e: models, set_model and close of what is not open", () => {
  it("answers `models` beside the model option in session/new, load and resume; set_model changes the model natively", async () => {
    const client = await t.start();
    await client.initialize();
    const ws = await t.workspace();
    const created = (await client.agent.request("session/new", { cwd: ws, mcpServers: [] })) as Record<string, any>;
    const sessionId = created.sessionId as string;
    const option = (created.configOptions as Array<Record<string, any>>).find((o) => o.category === "model")!;
    const asModels = (opt: Record<string, any>) => ({
      currentModelId: opt.currentValue,
      availableModels: (opt.options as Array<Record<string, any>>).map((o) => ({
        modelId: o.value,
        name: o.name,
        ...(o.description ? { description: o.description } : {}),
      })),
    });
    expect(created.models).toEqual(asModels(option));
    expect(created.models.availableModels.length).toBeGreaterThan(1);

    const other = (created.models.availableModels as Array<{ modelId: string }>).find((m) => m.modelId !== created.models.currentModelId)!;
    await expect(client.agent.request("session/set_model" as any, { sessionId, modelId: other.modelId })).resolves.toEqual({});
    const native = forSession(await t.calls("setModel"), sessionId).map((c) => (c.params as { model: { modelId: string } }).model.modelId);
    expect(native).toHaveLength(1);
    expect(other.modelId.endsWith(native[0]!)).toBe(true);
    await expect(client.agent.request("session/set_model" as any, { sessionId, modelId: "matrix-model" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown model "matrix-model"'),
    });
    await expect(client.agent.request("session/set_model" as any, { sessionId })).rejects.toMatchObject({ code: -32602 });
    await expect(client.agent.request("session/set_model" as any, { sessionId: "nope", modelId: other.modelId })).rejects.toMatchObject({
      code: -32002,
    });

    const resumed = (await client.agent.request("session/resume", { sessionId, cwd: ws, mcpServers: [] })) as Record<string, any>;
    expect(resumed.models).toEqual(asModels((resumed.configOptions as Array<Record<string, any>>).find((o) => o.category === "model")!));
    expect(resumed.models.currentModelId).toBe(other.modelId);
    await client.prompt(sessionId, "hello"); // persisted, so another connection can load it
    await client.close();

    const second = await t.start();
    await second.initialize();
    const loaded = (await second.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] })) as Record<string, any>;
    expect(loaded.models).toEqual(asModels((loaded.configOptions as Array<Record<string, any>>).find((o) => o.category === "model")!));
    second.expectValid();
  });

  it("session/close of an unknown or already closed session is {} and closes nothing natively", async () => {
    const client = await t.start();
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    await expect(client.agent.request("session/close", { sessionId })).resolves.toEqual({});
    await expect(client.agent.request("session/close", { sessionId })).resolves.toEqual({});
    await expect(client.agent.request("session/close", { sessionId: "sess_matrix_probe" })).resolves.toEqual({});
    // the SDK's client takes a -32002 answer to session/close as success: read the agent's own lines
    expect(client.transcript.agentMessages().filter((m: { error?: unknown }) => m.error !== undefined)).toEqual([]);
    expect(forSession(await t.calls("closeSession"), sessionId)).toHaveLength(1);
    expect((await t.calls("closeSession")).filter((c) => (c.params as { sessionId?: string }).sessionId === "sess_matrix_probe")).toEqual(
      [],
    );
    client.expectValid();
  });
});

describe("e2e: no usable ZCode", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("every session call is auth_required (-32000) with the reason and what to do; close is {}", async () => {
    const home = await mkdtemp(join(tmpdir(), "zcode-acp-nozcode-"));
    dirs.push(home);
    const missing = join(home, "ZCode");
    const client = await AcpTestClient.start({
      env: { HOME: home, ZCODE_ACP_ZCODE_INSTALL: missing, ZCODE_ACP_CONFIG_DIR: join(home, "config") },
    });
    try {
      await client.initialize();
      const ws = await t.workspace();
      const refusal = {
        code: -32000,
        message: expect.stringMatching(
          /^No ZCode install found at .+ \(missing\)\. Install ZCode there, or point zcode-acp at it with --zcode-install/,
        ),
        data: { code: "UNSUPPORTED_ZCODE", details: { failedStep: expect.any(String) } },
      };
      const session = { sessionId: "sess_matrix_probe", cwd: ws, mcpServers: [] };
      await expect(client.agent.request("session/new", { cwd: ws, mcpServers: [] })).rejects.toMatchObject(refusal);
      await expect(client.agent.request("session/list", {})).rejects.toMatchObject(refusal);
      await expect(client.agent.request("session/load", session)).rejects.toMatchObject(refusal);
      await expect(client.agent.request("session/resume", session)).rejects.toMatchObject(refusal);
      await expect(client.agent.request("session/fork" as any, session)).rejects.toMatchObject(refusal);
      await expect(
        client.agent.request("session/set_model" as any, { sessionId: "sess_matrix_probe", modelId: "m" }),
      ).rejects.toMatchObject(refusal);
      await expect(client.agent.request("session/close", { sessionId: "sess_matrix_probe" })).resolves.toEqual({});
      // (the SDK's client would take a -32002 as success: the agent's own answer is a result)
      const answers = client.transcript
        .agentMessages()
        .filter((m: { id?: unknown; method?: unknown }) => m.id !== undefined && m.method === undefined);
      expect(answers.at(-1)).toEqual({ jsonrpc: "2.0", id: expect.anything(), result: {} });
      client.expectValid();
    } finally {
      await client.close();
    }
  });
});
