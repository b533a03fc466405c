/**
 * session/load and session/resume of a session ZCode does not have answer -32002 (resource not
 * found), whatever words the host uses: the mapping follows the host's error code for a missing
 * session (-32004, fixtures/sim/app/out/host/sim-errors.js), not only its message. The real host
 * says "session unavailable" (docs/zcode-host.md §11.1); the other installs here are patched
 * to word it that way, and in words no pattern knows (sim-errors.js is not a pinned file, so the
 * install still verifies).
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { RawAcpClient } from "../../support/raw-acp-client.js";

const installs: SimInstall[] = [];
afterAll(async () => {
  await Promise.all(installs.map((i) => i.cleanup()));
});

async function install(wording: string | undefined): Promise<SimInstall> {
  const sim = await createSimulatedInstall();
  installs.push(sim);
  if (wording !== undefined) {
    const file = join(sim.root, "resources", "app.asar", "out", "host", "sim-errors.js");
    const source = await readFile(file, "utf8");
    const patched = source.replace("`Session not found: ${sessionId}`", JSON.stringify(wording));
    expect(patched).not.toBe(source);
    await writeFile(file, patched);
  }
  return sim;
}

for (const wording of [undefined, "session unavailable", "the conversation could not be opened"]) {
  describe(`unknown sessions (host says ${wording === undefined ? "the simulator's words" : JSON.stringify(wording)})`, () => {
    let sim: SimInstall;
    beforeAll(async () => {
      sim = await install(wording);
    });

    it("session/load and session/resume answer -32002 with the session id, for a missing id and for another workspace's session", async () => {
      const client = RawAcpClient.start({ env: sim.env });
      const ws = await mkdtemp(join(dirname(sim.root), "ws-"));
      const other = await mkdtemp(join(dirname(sim.root), "ws-"));
      const existing = await client.openSession(other);
      for (const sessionId of ["ses_does_not_exist", existing]) {
        for (const method of ["session/load", "session/resume"]) {
          const response = await client.request(method, { sessionId, cwd: ws, mcpServers: [] });
          expect(response.error, `${method} ${sessionId}`).toMatchObject({ code: -32002, data: { code: "SESSION_NOT_FOUND", sessionId } });
        }
      }
      expect(client.transcript.problems).toEqual([]);
      expect(await client.close()).toEqual({ code: 0, signal: null });
    });
  });
}
