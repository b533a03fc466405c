/**
 * Onboarding from the editor (adr/0021), through the built CLI on the simulated 3.14.5, a build
 * no manifest covers: session/new answers with a readable error naming the version and
 * `zcode-acp onboard`; a client that advertises terminal auth (ACP's `auth.terminal`, or Zed's
 * `_meta["terminal-auth"]`) also gets the "Review this ZCode build" auth method, and session/new
 * answers it `auth_required` so it offers that method. The method's command line runs the review.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { CLI_PATH } from "../../support/cli-process.js";

let sim: SimInstall;
const clients: AcpTestClient[] = [];
beforeAll(async () => {
  sim = await createSimulatedInstall({ release: "3.14.5" });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => c.kill("SIGKILL"))));
  await sim?.cleanup();
});

async function start(): Promise<AcpTestClient> {
  const client = await AcpTestClient.start({ env: sim.env });
  clients.push(client);
  return client;
}

const READABLE =
  /^ZCode 3\.14\.5 is a build this zcode-acp has not verified, so it starts no session on it\. To review it, run `zcode-acp onboard` in a terminal/;

describe("a build no manifest covers, seen from the editor", () => {
  it("a plain client: no onboarding method; session/new names the version and the command", async () => {
    const client = await start();
    const init = await client.initialize({});
    expect(init.authMethods?.map((m) => m.id)).toEqual(["zcode-app"]);
    const error = await client.newSession(sim.root).then(
      () => undefined,
      (e: unknown) => e as { code: number; message: string; data: any },
    );
    expect(error).toMatchObject({
      code: -32000,
      data: { code: "UNSUPPORTED_ZCODE", details: { appVersion: "3.14.5", onboard: "zcode-acp onboard" } },
    });
    expect(error!.message).toMatch(READABLE);
    expect(error!.message).not.toContain("sign-in options");
    client.expectValid();
  });

  it("auth.terminal: a terminal method that runs `onboard`; session/new is auth_required", async () => {
    const client = await start();
    const init = await client.initialize({ auth: { terminal: true } });
    expect(init.authMethods?.map((m) => m.id)).toEqual(["zcode-app", "zcode-onboard"]);
    expect(init.authMethods?.[1]).toMatchObject({ type: "terminal", name: "Review this ZCode build", args: ["onboard"] });
    const error = await client.newSession(sim.root).then(
      () => undefined,
      (e: unknown) => e as { code: number; message: string },
    );
    expect(error?.code).toBe(-32000);
    expect(error?.message).toMatch(READABLE);
    expect(error?.message).toContain(`choose "Review this ZCode build" among the sign-in options`);
    client.expectValid();
  });

  it('_meta["terminal-auth"] (Zed): the method carries the full command line, and that command runs the review', async () => {
    const client = await start();
    const init = await client.initialize({ _meta: { "terminal-auth": true } });
    const method = init.authMethods?.find((m) => m.id === "zcode-onboard") as any;
    expect(method.type).toBeUndefined();
    const terminal = method._meta["terminal-auth"] as { command: string; args: string[]; label: string };
    expect(terminal).toEqual({ command: process.execPath, args: [CLI_PATH, "onboard"], label: "zcode-acp onboard" });
    client.expectValid();
    // what the editor runs (here without a terminal: the review is printed and nothing is written)
    const run = await promisify(execFile)(terminal.command, terminal.args, { env: { ...process.env, ...sim.env } });
    expect(run.stdout).toMatch(/^ZCode onboarding: candidate found\n {2}ZCode 3\.14\.5/);
  });
});
