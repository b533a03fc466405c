/**
 * The simulated host's V4 conversation input (fixtures/sim/app/out/host/sim-v4.js; docs/zcode-host.md
 * §14), on both lines: the handshake and its order, sendText (startNow / guide / queue) and its ack,
 * guided input read by `sim:steerable`, queued inputs that start their own turns, stop (which holds
 * what is queued), deleteQueueItem (compare-and-set), the command query and the uploads.
 */
import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Any } from "./support/host-harness.js";
import { sessionRig, WS, type SessionRig } from "./support/session-helpers.js";

const CLIENT = "sim-test-client";

async function handshake(rig: SessionRig): Promise<Any> {
  const hello = await rig.conn.agent.helloConversationV4({});
  await rig.conn.agent.initializeConversationV4({ kind: "clientHello", protocolVersion: 3, clientId: CLIENT, appVersion: "test" });
  return hello;
}

function command(rig: SessionRig, type: string, payload: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Any> {
  const envelope = { commandId: randomUUID(), clientId: CLIENT, sessionId: rig.sessionId, type, payload, issuedAt: Date.now(), ...extra };
  return rig.conn.agent.sendConversationCommandV4({ workspacePath: WS, envelope }).then((ack: Any) => ({ ...ack, envelope }));
}

const started = (rig: SessionRig): Any[] => rig.events.sessionEvents().filter((e) => e.type === "turn.started");

for (const release of ["3.11.2", "3.12.3"] as const) {
  describe(`V4 input on the simulated ${release}`, () => {
    it("enforces the handshake order and one client id; the hello names the line's capabilities", async () => {
      const rig = await sessionRig({ release });
      const clientHello = { kind: "clientHello", protocolVersion: 3, clientId: CLIENT, appVersion: "test" };
      await expect(rig.conn.agent.initializeConversationV4(clientHello)).rejects.toMatchObject({ data: "fault.connection.helloRequired" });
      await expect(
        rig.conn.agent.sendConversationCommandV4({ workspacePath: WS, envelope: { commandId: "c1", type: "stop" } }),
      ).rejects.toMatchObject({ data: "fault.connection.handshakeRequired" });
      const hello = await handshake(rig);
      expect(hello).toMatchObject({ kind: "hello", protocolVersion: 3, clientMode: "desktop-continuous", deliveryProfile: "continuous" });
      expect(hello.capabilities.independentPlanState === true).toBe(release === "3.12.3");
      await expect(rig.conn.agent.initializeConversationV4({ ...clientHello, clientId: "other" })).rejects.toMatchObject({
        data: "fault.connection.clientChanged",
      });
      await expect(rig.conn.agent.initializeConversationV4({ ...clientHello, surprise: true })).rejects.toMatchObject({ code: -32602 });
      await expect(command(rig, "stop", {}, { clientId: "someone-else" })).rejects.toMatchObject({ data: "fault.command.clientMismatch" });
    });

    it("sendText starts a turn that carries the command id as its input id; the same command id again is a duplicate", async () => {
      const rig = await sessionRig({ release });
      await handshake(rig);
      const ack = await command(rig, "sendText", { text: "hello v4", requestedDelivery: "startNow" });
      expect(ack).toMatchObject({
        status: "accepted",
        revisionAtDecision: expect.any(Number),
        result: { type: "inputAccepted", delivery: "startNow", inputId: ack.envelope.commandId },
      });
      const terminal = await rig.events.terminal(1);
      expect(started(rig)[0].payload.inputId).toBe(ack.envelope.commandId);
      expect(terminal.payload).toMatchObject({ resultType: "success", response: "You said: hello v4", inputId: ack.envelope.commandId });
      const again = await rig.conn.agent.sendConversationCommandV4({ workspacePath: WS, envelope: ack.envelope });
      expect(again).toMatchObject({ status: "duplicate", result: { inputId: ack.envelope.commandId } });
      expect(started(rig)).toHaveLength(1);
    });

    it("sim:steerable: a guided input joins the running turn and the model answers it before the one terminal", async () => {
      const rig = await sessionRig({ release });
      await handshake(rig);
      await command(rig, "sendText", { text: "sim:steerable wait=5000", requestedDelivery: "startNow" });
      await rig.events.waitForSessionEvent("model.streaming");
      const guide = await command(rig, "sendText", { text: "prefer tabs", requestedDelivery: "guide" });
      expect(guide.result).toMatchObject({ delivery: "guide", inputId: guide.envelope.commandId });
      const terminal = await rig.events.terminal(1);
      expect(terminal.payload.response).toBe("Working on it; steer me if you like. Steered by: prefer tabs");
      const types = rig.events.ofTurn(terminal.turnId).map((e) => e.type);
      expect(types.indexOf("turn.steerQueued")).toBeLessThan(types.indexOf("turn.steerDrained"));
      expect(started(rig)).toHaveLength(1);
      // without a guide the scenario says so when its wait ends
      const quiet = await command(rig, "sendText", { text: "sim:steerable wait=50" });
      expect(quiet.result.delivery).toBe("startNow");
      expect((await rig.events.terminal(2)).payload.response).toMatch(/Nobody steered me\.$/);
    });

    it("a queued input starts its own turn after the running one; a guide with an attachment waits in the queue", async () => {
      const rig = await sessionRig({ release });
      await handshake(rig);
      await command(rig, "sendText", { text: "sim:stream-until-cancel interval=10 max=10" });
      const queued = await command(rig, "sendText", { text: "next please", requestedDelivery: "queue" });
      expect(queued.result).toMatchObject({ delivery: "queue", inputId: queued.envelope.commandId });
      const second = await rig.events.terminal(2);
      expect(second.payload).toMatchObject({ response: "You said: next please", inputId: queued.envelope.commandId });
      expect(started(rig).map((e) => e.payload.inputId)[1]).toBe(queued.envelope.commandId);
    });

    it("stop ends the running turn and holds what is queued; deleteQueueItem is compare-and-set", async () => {
      const rig = await sessionRig({ release });
      await handshake(rig);
      await command(rig, "sendText", { text: "sim:stream-until-cancel interval=10 max=500" });
      const queued = await command(rig, "sendText", { text: "held", requestedDelivery: "queue" });
      const stop = await command(rig, "stop", {});
      expect(stop.status).toBe("accepted");
      expect((await rig.events.terminal(1)).payload.resultType).toBe("cancelled");
      const queueItemId = `queue_${queued.envelope.commandId}`;
      const stale = await command(rig, "deleteQueueItem", { queueItemId }, { baseRevision: stop.revisionAtDecision - 1 });
      expect(stale).toMatchObject({ status: "stale", reasonCode: "guard.revisionChanged" });
      const deleted = await command(rig, "deleteQueueItem", { queueItemId }, { baseRevision: stale.revisionAtDecision });
      expect(deleted.status).toBe("accepted");
      const again = await command(rig, "deleteQueueItem", { queueItemId }, { baseRevision: deleted.revisionAtDecision });
      expect(again).toMatchObject({ status: "noop", reasonCode: "guard.queueItemNotFound" });
      expect(await command(rig, "stop", {})).toMatchObject({ status: "noop" });
      // the held input never ran
      expect(started(rig)).toHaveLength(1);
    });

    it("the command query returns the ack of a known command and unknown for any other", async () => {
      const rig = await sessionRig({ release });
      await handshake(rig);
      const ack = await command(rig, "sendText", { text: "remember me" });
      const answer = await rig.conn.agent.queryConversationCommandsV4({
        workspacePath: WS,
        commands: [
          { sessionId: rig.sessionId, commandId: ack.envelope.commandId },
          { sessionId: rig.sessionId, commandId: "never-sent" },
        ],
      });
      expect(answer.results.map((r: Any) => (r.result === "unknown" ? "unknown" : r.result.status))).toEqual(["accepted", "unknown"]);
    });

    it("uploads: begin, chunks in order, commit with the checksum; sendText takes only committed refs", async () => {
      const rig = await sessionRig({ release });
      await handshake(rig);
      const bytes = Buffer.from("a tiny image");
      const target = { workspacePath: WS, sessionId: rig.sessionId };
      const begin = (uploadId: string, checksumOf: Buffer) =>
        rig.conn.agent.attachmentBeginV4({
          ...target,
          uploadId,
          fileName: "a.png",
          mime: "image/png",
          totalBytes: bytes.length,
          totalChunks: 1,
          checksum: `sha256:${createHash("sha256").update(checksumOf).digest("hex")}`,
        });
      expect(await begin("up-1", bytes)).toEqual({ uploadId: "up-1", state: "staging", nextChunkIndex: 0 });
      await expect(rig.conn.agent.attachmentChunkV4({ ...target, uploadId: "up-1", chunkIndex: 1, dataBase64: "" })).rejects.toMatchObject({
        data: "fault.attachment.chunkOutOfOrder",
      });
      expect(
        await rig.conn.agent.attachmentChunkV4({ ...target, uploadId: "up-1", chunkIndex: 0, dataBase64: bytes.toString("base64") }),
      ).toEqual({
        uploadId: "up-1",
        nextChunkIndex: 1,
      });
      const { ref } = await rig.conn.agent.attachmentCommitV4({ ...target, uploadId: "up-1" });
      expect(ref).toMatch(/^att_/);
      await begin("up-2", Buffer.from("something else"));
      await rig.conn.agent.attachmentChunkV4({ ...target, uploadId: "up-2", chunkIndex: 0, dataBase64: bytes.toString("base64") });
      await expect(rig.conn.agent.attachmentCommitV4({ ...target, uploadId: "up-2" })).rejects.toMatchObject({
        data: "fault.attachment.checksumMismatch",
      });
      const unknown = await command(rig, "sendText", {
        text: "see",
        attachments: [{ ref: "att_nope", fileName: "x", mime: "image/png", bytes: 1 }],
      });
      expect(unknown).toMatchObject({ status: "rejected", reasonCode: "proto.attachmentUnknown" });
      const sent = await command(rig, "sendText", {
        text: "see",
        attachments: [{ ref, fileName: "a.png", mime: "image/png", bytes: bytes.length }],
      });
      expect(sent.status).toBe("accepted");
      await rig.events.terminal(1);
      expect(started(rig)[0].payload.attachments).toEqual([{ ref, fileName: "a.png", mime: "image/png", bytes: bytes.length }]);
    });
  });
}
