/**
 * The `cwd` of session/new, load, resume and list through the built CLI: a path that does not
 * exist, a regular file, a NUL byte or a relative path is refused with -32602 naming the path,
 * before anything reaches the host; other spellings of a directory (`..`, a symlink) are
 * normalised to its real path, the same way in every method.
 */
import { mkdtemp, realpath, symlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { RawAcpClient } from "../../support/raw-acp-client.js";

let sim: SimInstall;
let client: RawAcpClient | undefined;
beforeAll(async () => {
  sim = await createSimulatedInstall();
});
afterEach(async () => {
  if (client) {
    expect(client.transcript.problems).toEqual([]);
    expect(await client.close()).toEqual({ code: 0, signal: null });
  }
  client = undefined;
});
afterAll(async () => {
  await sim?.cleanup();
});

const workspace = async (): Promise<string> => realpath(await mkdtemp(join(dirname(sim.root), "ws-")));

async function started(): Promise<RawAcpClient> {
  client = RawAcpClient.start({ env: sim.env });
  const init = await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  expect(init.result).toBeDefined();
  return client;
}

/** every workspacePath the simulated host was given */
async function hostPaths(): Promise<unknown[]> {
  const log = await sim.readCallLog();
  return log.filter((e) => e.kind === "call").map((e) => (e.params as { workspacePath?: unknown } | undefined)?.workspacePath);
}

describe("cwd is refused before it reaches the host", () => {
  it("refuses a missing path, a regular file, a NUL byte and a relative path with -32602 naming the path", async () => {
    const c = await started();
    const ws = await workspace();
    const file = join(ws, "notes.txt");
    await writeFile(file, "a file, not a directory\n");
    const cases: Array<[string, RegExp]> = [
      [join(ws, "missing"), /does not exist/],
      [file, /is not a directory/],
      [`${ws}\u0000/evil`, /NUL byte/],
      ["relative/dir", /not an absolute path/],
    ];
    for (const [cwd, why] of cases) {
      for (const [method, params] of [
        ["session/new", { cwd, mcpServers: [] }],
        ["session/load", { sessionId: "ses_any", cwd, mcpServers: [] }],
        ["session/resume", { sessionId: "ses_any", cwd }],
        // a list filter naming a directory that does not exist is an empty list (ACP-LIST-002)
        ...(why.source === "does not exist" ? [] : ([["session/list", { cwd }]] as const)),
      ] as const) {
        const response = await c.request(method, params);
        expect(response.error, `${method} ${JSON.stringify(cwd)}`).toMatchObject({ code: -32602, data: { code: "INVALID_PARAMS" } });
        expect(response.error.message).toMatch(why);
        expect(response.error.message).toContain(JSON.stringify(cwd));
      }
    }
    expect((await c.request("session/list", { cwd: join(ws, "missing") })).result).toEqual({ sessions: [] });
    // nothing was launched for them: no host call carried any of these paths
    const seen = await hostPaths();
    for (const [cwd] of cases) expect(seen).not.toContain(cwd);
  });
});

describe("cwd is normalised to the real path in every method", () => {
  it("session/new, list, load and resume agree on `dir/../dir` and a symlink to dir", async () => {
    const ws = await workspace();
    const dottedRaw = `${ws}/../${basename(ws)}`;
    const link = join(dirname(ws), `link-${basename(ws)}`);
    await symlink(ws, link);
    const c = await started();
    const created = await c.request("session/new", { cwd: dottedRaw, mcpServers: [] });
    expect(created.error).toBeUndefined();
    const sessionId = created.result.sessionId as string;
    const log = await sim.readCallLog();
    const creates = log.filter((e) => e.kind === "call" && e.method === "createSession");
    expect((creates.at(-1)!.params as { workspacePath: string }).workspacePath).toBe(ws);
    // ZCode keeps a session from its first prompt on (deferred persistence)
    expect((await c.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "keep it" }] })).error).toBeUndefined();
    for (const spelling of [dottedRaw, `${ws}/./`, link, ws]) {
      const listed = await c.request("session/list", { cwd: spelling });
      expect(listed.result.sessions, `list ${spelling}`).toContainEqual(expect.objectContaining({ sessionId, cwd: ws }));
    }
    await c.close();
    client = undefined;
    // a fresh bridge: load and resume reach the host with the real path
    for (const [method, spelling] of [
      ["session/load", link],
      ["session/resume", dottedRaw],
    ] as const) {
      const fresh = await started();
      const response = await fresh.request(method, { sessionId, cwd: spelling, mcpServers: [] });
      expect(response.error, `${method} ${spelling}`).toBeUndefined();
      expect(await fresh.close()).toEqual({ code: 0, signal: null });
      client = undefined;
    }
    const resumed = (await sim.readCallLog()).filter(
      (e) => e.kind === "call" && e.method === "resumeSession" && (e.params as { sessionId?: string }).sessionId === sessionId,
    );
    expect(resumed.map((e) => (e.params as { workspacePath: string }).workspacePath)).toEqual([ws, ws]);
  });
});
