/**
 * A long session on the V4 read path costs the same late as early: the rows the bridge holds of a
 * subscribed conversation stay under their bound (src/native/v4-read/row-store.ts "Bound",
 * docs/zcode-host.md §16.5) however many turns ran, as `_zcode/diagnostics` reports them, and a
 * turn after the bound was passed many times over is told to the client as completely as the first.
 */
import { describe, expect, it } from "vitest";
import type { AcpTestClient } from "../../support/acp-test-client.js";
import { e2e } from "../../support/e2e-harness.js";
import { V3 } from "../answers.js";

const t = e2e();
/** enough tool turns (4 rows each on the simulator: header, input, tool, answer) to pass the bound of 512 rows twice */
const TURNS = 320;

type V4Rows = { heldRows: number; peakHeldRows: number; heldBytes: number; peakHeldBytes: number; evictedRows: number } & Record<
  "maxHeldRows" | "maxHeldBytes" | "stores",
  number
>;
const v4Rows = async (client: AcpTestClient): Promise<V4Rows> =>
  ((await client.agent.request("_zcode/diagnostics" as never, {} as never)) as { v4Rows: V4Rows }).v4Rows;

/**
 * what one prompt's turn told (its tool calls and answer; the first turn also has the opening and
 * title updates, left out), with the ids that differ from turn to turn replaced by their order of appearance
 */
const TURN_UPDATES = new Set(["tool_call", "tool_call_update", "agent_message_chunk", "agent_thought_chunk", "plan"]);
function shape(updates: any[]): unknown[] {
  const ids = new Map<string, string>();
  const id = (value: string): string => {
    if (!ids.has(value)) ids.set(value, `#${ids.size}`);
    return ids.get(value)!;
  };
  return updates
    .filter((u) => TURN_UPDATES.has(u.sessionUpdate))
    .map((u) =>
      JSON.parse(
        JSON.stringify(u, (key, value: unknown) =>
          (key === "toolCallId" || key === "messageId") && typeof value === "string" ? id(value) : value,
        ),
      ),
    );
}

describe.runIf(V3)("e2e (V4): the held rows stay bounded over a long session", () => {
  it(`${TURNS} tool turns: the held rows never pass their bound, and the last turn is told as completely as the first`, async () => {
    const client = await t.start({ env: { ZCODE_ACP_DIAGNOSTICS: "1" } });
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    const turns: unknown[][] = [];
    for (let i = 0; i < TURNS; i++) {
      const before = client.updates(sessionId).length;
      await expect(client.prompt(sessionId, `sim:tool-read path=notes.txt turn ${i}`)).resolves.toMatchObject({ stopReason: "end_turn" });
      if (i === 0 || i === TURNS - 1) turns.push(shape(client.updates(sessionId).slice(before)));
    }
    const rows = await v4Rows(client);
    expect(rows.stores).toBe(1);
    // the bound was passed (rows were let go of), and neither now nor after any frame was it exceeded
    expect(rows.peakHeldRows).toBeLessThanOrEqual(rows.maxHeldRows);
    expect(rows.heldRows).toBeLessThanOrEqual(rows.maxHeldRows);
    expect(rows.peakHeldBytes).toBeLessThanOrEqual(rows.maxHeldBytes);
    expect(rows.evictedRows).toBeGreaterThan(rows.maxHeldRows);
    // the last turn: its tool call, its result and its answer, as for the first
    const [first, last] = turns as [any[], any[]];
    expect(first.map((u) => u.sessionUpdate)).toEqual(expect.arrayContaining(["tool_call", "tool_call_update", "agent_message_chunk"]));
    expect(first.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed")).toBe(true);
    expect(last).toEqual(first);
    client.expectValid();
  }, 240_000);
});
