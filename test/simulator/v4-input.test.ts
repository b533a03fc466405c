/**
 * The simulated host's V4 conversation input (fixtures/sim/app/out/host/sim-v4.js; docs/zcode-host.md
 * §14), on both lines: the handshake and its order, sendText and its ack, guided input read by
 * `sim:steerable`, queued inputs that start their own turns, stop (which holds what is queued),
 * deleteQueueItem (compare-and-set), the command query and the uploads. The routing rules taken
 * from ZCode's source (preemption, held queues, setAutoDrain, …) are in v4-routing.test.ts.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Any } from "./support/host-harness.js";
import { sessionRig, WS } from "./support/session-helpers.js";
import { CLIENT, command, handshake, started } from "./support/v4-helpers.js";

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
      const ack = await command(rig, "sendText", { text: "hello v4" });
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

    it("sim:steerable: a guided input joins the running turn (acked as queue) and the model answers it before the one terminal", async () => {
      const rig = await sessionRig({ release });
      await handshake(rig);
      const first = await command(rig, "sendText", { text: "sim:steerable wait=5000" });
      await rig.events.waitForSessionEvent("model.streaming");
      const guide = await command(rig, "sendText", { text: "prefer tabs", requestedDelivery: "guide" });
      // ZCode never acks "guide": a guide while busy is acked as queue
      expect(guide.result).toEqual({ type: "inputAccepted", delivery: "queue", inputId: guide.envelope.commandId });
      const terminal = await rig.events.terminal(1);
      expect(terminal.payload.response).toBe("Working on it; steer me if you like. Steered by: prefer tabs");
      const turn = rig.events.ofTurn(terminal.turnId);
      const queuedEvent = turn.find((e) => e.type === "turn.steerQueued");
      const drainedEvent = turn.find((e) => e.type === "turn.steerDrained");
      const id = guide.envelope.commandId;
      expect(queuedEvent.payload).toEqual({
        pendingInputId: id,
        input: "prefer tabs",
        inputPreview: "prefer tabs",
        inputSize: 11,
        targetTurnId: terminal.turnId,
        queueLength: 1,
        delivery: "guide",
      });
      expect(drainedEvent.payload).toEqual({
        pendingInputIds: [id],
        queryIds: [id],
        targetTurnId: terminal.turnId,
        injectedMessageIds: [`msg_${id.slice(-12)}`],
      });
      expect(turn.indexOf(queuedEvent)).toBeLessThan(turn.indexOf(drainedEvent));
      expect(started(rig).map((e) => e.payload.inputId)).toEqual([first.envelope.commandId]);
      // the guided text is a user message of the running turn
      const read = await rig.conn.agent.readSessionMessages({ workspacePath: WS, sessionId: rig.sessionId });
      expect(read.find((m: Any) => m.info.messageId === `msg_${id.slice(-12)}`)).toMatchObject({
        info: { role: "user", turnId: terminal.turnId },
        parts: [{ type: "text", text: "prefer tabs" }],
      });
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

    it("stop ends the running turn and holds what is queued; deleteQueueItem is compare-and-set; an idle stop is accepted", async () => {
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
      expect(again).toMatchObject({ status: "noop", reasonCode: "queue.itemMissing", revisionAtDecision: deleted.revisionAtDecision });
      expect(await command(rig, "stop", {})).toMatchObject({ status: "accepted" });
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
