/**
 * How the simulated host routes V4 input, as ZCode's public source does
 * (shared/reference/zcode-v4-source-check.md §2.4, §2.6, §2.7; fixtures/sim/app/out/host/sim-v4.js):
 * inputRouting without a requested delivery, forced send-now preempting the running turn (also a
 * turn ZCode runs of its own), guides that fall back to the queue, held queues and setAutoDrain,
 * attachment limits and what reaches the turn, lost-ack query answers, sessions not live in the CLI.
 */
import { describe, expect, it } from "vitest";
import type { Any } from "./support/host-harness.js";
import { sessionRig, WS, type SessionRig } from "./support/session-helpers.js";
import { command, handshake, ofKind, started, upload } from "./support/v4-helpers.js";

async function v4Rig(release: "3.11.2" | "3.12.3", profile?: Record<string, unknown>): Promise<SessionRig> {
  const rig = await sessionRig({ release, profile });
  await handshake(rig);
  return rig;
}

const preemptions = async (rig: SessionRig): Promise<Any[]> => ofKind(await rig.install.readCallLog(), "preempted");

for (const release of ["3.11.2", "3.12.3"] as const) {
  describe(`V4 routing on the simulated ${release}`, () => {
    it("without a requested delivery: idle starts a turn (startNow), busy queues (queue); nothing is preempted", async () => {
      const rig = await v4Rig(release);
      const first = await command(rig, "sendText", { text: "sim:stream-until-cancel interval=10 max=50" });
      expect(first.result).toEqual({ type: "inputAccepted", delivery: "startNow", inputId: first.envelope.commandId });
      const second = await command(rig, "sendText", { text: "after you" });
      expect(second.result).toEqual({ type: "inputAccepted", delivery: "queue", inputId: second.envelope.commandId });
      // the queue has an item: a third input queues behind it
      const third = await command(rig, "sendText", { text: "and me" });
      expect(third.result.delivery).toBe("queue");
      expect((await rig.events.terminal(1)).payload.resultType).toBe("success");
      expect((await rig.events.terminal(3)).payload.response).toBe("You said: and me");
      expect(started(rig).map((e) => e.payload.inputId)).toEqual([first, second, third].map((a) => a.envelope.commandId));
      expect(await preemptions(rig)).toEqual([]);
    });

    it("an explicit queue while idle starts at once (a guess); a delivery outside the schema is an RPC error; empty input fails", async () => {
      const rig = await v4Rig(release);
      const queued = await command(rig, "sendText", { text: "queue me", requestedDelivery: "queue" });
      expect(queued.result.delivery).toBe("startNow");
      expect((await rig.events.terminal(1)).payload.inputId).toBe(queued.envelope.commandId);
      await expect(command(rig, "sendText", { text: "x", requestedDelivery: "auto" })).rejects.toMatchObject({ code: -32602 });
      expect(await command(rig, "sendText", { text: "  " })).toMatchObject({ status: "failed", reasonCode: "proto.invalidPayload" });
    });

    it("startNow while a turn runs preempts it: the turn ends cancelled, then the input starts; the call log says so", async () => {
      const rig = await v4Rig(release);
      const first = await command(rig, "sendText", { text: "sim:stream-until-cancel interval=10 max=500" });
      await rig.events.waitForSessionEvent("model.streaming");
      const now = await command(rig, "sendText", { text: "right now", requestedDelivery: "startNow" });
      expect(now.result).toEqual({ type: "inputAccepted", delivery: "startNow", inputId: now.envelope.commandId });
      const cancelled = await rig.events.terminal(1);
      expect(cancelled.payload).toMatchObject({ resultType: "cancelled", inputId: first.envelope.commandId });
      expect((await rig.events.terminal(2)).payload).toMatchObject({ response: "You said: right now", inputId: now.envelope.commandId });
      expect(started(rig).map((e) => e.payload.inputId)).toEqual([first.envelope.commandId, now.envelope.commandId]);
      expect(await preemptions(rig)).toEqual([
        expect.objectContaining({
          sessionId: rig.sessionId,
          commandId: now.envelope.commandId,
          turnId: cancelled.turnId,
          inputId: first.envelope.commandId,
          ownTurn: false,
        }),
      ]);
    });

    it("a second startNow while the first holds the promotion lease fails with fault.command.inputRejected", async () => {
      const rig = await v4Rig(release);
      await command(rig, "sendText", { text: "sim:stream-until-cancel interval=10 max=500" });
      await rig.events.waitForSessionEvent("model.streaming");
      const [a, b] = await Promise.all([
        command(rig, "sendText", { text: "first now", requestedDelivery: "startNow" }),
        command(rig, "sendText", { text: "second now", requestedDelivery: "startNow" }),
      ]);
      expect(a.result.delivery).toBe("startNow");
      expect(b).toMatchObject({ status: "failed", reasonCode: "fault.command.inputRejected" });
      expect((await rig.events.terminal(2)).payload.response).toBe("You said: first now");
    });

    it("a guide while idle starts a turn; a guide with an attachment waits in the queue", async () => {
      const rig = await v4Rig(release);
      const idle = await command(rig, "sendText", { text: "guide me", requestedDelivery: "guide" });
      expect(idle.result.delivery).toBe("startNow");
      await rig.events.terminal(1);
      const ref = await upload(rig, "up-g", "a.png", "image/png", Buffer.from("png"));
      await command(rig, "sendText", { text: "sim:steerable wait=1000" });
      await rig.events.waitForSessionEvent("model.streaming", 5000, (await rig.events.terminal(1)).seq);
      const withFile = await command(rig, "sendText", {
        text: "look",
        requestedDelivery: "guide",
        attachments: [{ ref, fileName: "a.png", mime: "image/png", bytes: 3 }],
      });
      expect(withFile.result.delivery).toBe("queue");
      expect((await rig.events.terminal(2)).payload.response).toMatch(/Nobody steered me\.$/);
      expect((await rig.events.terminal(3)).payload.inputId).toBe(withFile.envelope.commandId);
      expect(rig.events.innerTypes()).not.toContain("turn.steerQueued");
    });

    it("a guide the running turn never takes falls back to the queue and starts its own turn", async () => {
      const rig = await v4Rig(release);
      await command(rig, "sendText", { text: "sim:stream-until-cancel interval=10 max=50" });
      await rig.events.waitForSessionEvent("model.streaming");
      const guide = await command(rig, "sendText", { text: "steer this", requestedDelivery: "guide" });
      expect(guide.result.delivery).toBe("queue");
      const first = await rig.events.terminal(1);
      expect(first.payload.resultType).toBe("success");
      const own = await rig.events.terminal(2);
      expect(own.payload).toMatchObject({ response: "You said: steer this", inputId: guide.envelope.commandId });
      expect(started(rig)[1].payload.inputId).toBe(guide.envelope.commandId);
      expect(rig.events.innerTypes()).toContain("turn.steerQueued");
      expect(rig.events.innerTypes()).not.toContain("turn.steerDrained");
      expect(ofKind(await rig.install.readCallLog(), "guide-fallback")).toEqual([
        expect.objectContaining({
          commandId: guide.envelope.commandId,
          turnId: first.turnId,
          queueItemId: `queue_${guide.envelope.commandId}`,
        }),
      ]);
    });

    it("a stop that leaves items holds the queue: sendText fails heldQueueDispositionRequired until setAutoDrain(true) drains it", async () => {
      const rig = await v4Rig(release);
      await command(rig, "sendText", { text: "sim:stream-until-cancel interval=10 max=500" });
      await rig.events.waitForSessionEvent("model.streaming");
      const queued = await command(rig, "sendText", { text: "held one" });
      // an untaken guide falls back to the queue too, behind the item admitted before it
      const guide = await command(rig, "sendText", { text: "held guide", requestedDelivery: "guide" });
      const stop = await command(rig, "stop", {});
      expect(stop.status).toBe("accepted");
      expect((await rig.events.terminal(1)).payload.resultType).toBe("cancelled");
      const refused = await command(rig, "sendText", { text: "a new prompt" });
      expect(refused).toMatchObject({ status: "failed", reasonCode: "heldQueueDispositionRequired" });
      expect(await command(rig, "sendText", { text: "now!", requestedDelivery: "startNow" })).toMatchObject({
        status: "failed",
        reasonCode: "heldQueueDispositionRequired",
      });
      expect(await command(rig, "setAutoDrain", { autoDrain: true }, { baseRevision: 0 })).toMatchObject({
        status: "stale",
        reasonCode: "guard.revisionChanged",
      });
      await expect(command(rig, "setAutoDrain", { autoDrain: true })).rejects.toMatchObject({ code: -32602 });
      expect(await command(rig, "setAutoDrain", { autoDrain: "yes" }, { baseRevision: refused.revisionAtDecision })).toMatchObject({
        status: "rejected",
        reasonCode: "proto.invalidPayload",
      });
      // nothing ran while held
      expect(started(rig)).toHaveLength(1);
      const release_ = await command(rig, "setAutoDrain", { autoDrain: true }, { baseRevision: refused.revisionAtDecision });
      expect(release_).toMatchObject({ status: "accepted" });
      expect(release_.revisionAtDecision).toBeGreaterThan(refused.revisionAtDecision);
      expect((await rig.events.terminal(2)).payload).toMatchObject({ response: "You said: held one", inputId: queued.envelope.commandId });
      expect((await rig.events.terminal(3)).payload).toMatchObject({ response: "You said: held guide", inputId: guide.envelope.commandId });
      expect(await preemptions(rig)).toEqual([]);
    });

    it("after the held items are deleted, inputs queued later do not drain until setAutoDrain(true) (a guess)", async () => {
      const rig = await v4Rig(release);
      await command(rig, "sendText", { text: "sim:stream-until-cancel interval=10 max=500" });
      await rig.events.waitForSessionEvent("model.streaming");
      const held = await command(rig, "sendText", { text: "held" });
      await command(rig, "stop", {});
      await rig.events.terminal(1);
      const probe = await command(rig, "deleteQueueItem", { queueItemId: "queue_none" }, { baseRevision: 0 });
      const deleted = await command(
        rig,
        "deleteQueueItem",
        { queueItemId: `queue_${held.envelope.commandId}` },
        { baseRevision: probe.revisionAtDecision },
      );
      expect(deleted.status).toBe("accepted");
      // the queue is empty: idle again, a prompt starts
      const next = await command(rig, "sendText", { text: "sim:stream-until-cancel interval=10 max=50" });
      expect(next.result.delivery).toBe("startNow");
      const later = await command(rig, "sendText", { text: "later" });
      expect(later.result.delivery).toBe("queue");
      const ended = await rig.events.terminal(2);
      expect(ended.payload.inputId).toBe(next.envelope.commandId);
      // still queued after the turn ended: deleting it with the current revision finds it
      const revision = (await command(rig, "deleteQueueItem", { queueItemId: "queue_none" }, { baseRevision: 0 })).revisionAtDecision;
      const stillThere = await command(rig, "deleteQueueItem", { queueItemId: "queue_none" }, { baseRevision: revision });
      expect(stillThere).toMatchObject({ status: "noop", reasonCode: "queue.itemMissing" });
      expect(started(rig)).toHaveLength(2);
      await command(rig, "setAutoDrain", { autoDrain: true }, { baseRevision: stillThere.revisionAtDecision });
      expect((await rig.events.terminal(3)).payload).toMatchObject({ response: "You said: later", inputId: later.envelope.commandId });
    });

    it("with a heldQueueDisposition the input is routed as if the queue were empty and the held items stay held (a guess)", async () => {
      const rig = await v4Rig(release);
      await command(rig, "sendText", { text: "sim:stream-until-cancel interval=10 max=500" });
      await rig.events.waitForSessionEvent("model.streaming");
      const held = await command(rig, "sendText", { text: "held" });
      await command(rig, "stop", {});
      await rig.events.terminal(1);
      const chosen = await command(rig, "sendText", { text: "go on", heldQueueDisposition: "keep" });
      expect(chosen.result.delivery).toBe("startNow");
      expect((await rig.events.terminal(2)).payload.inputId).toBe(chosen.envelope.commandId);
      // the held item is still there, and a prompt without a disposition is still refused
      expect(await command(rig, "sendText", { text: "again" })).toMatchObject({
        status: "failed",
        reasonCode: "heldQueueDispositionRequired",
      });
      const probe = await command(rig, "deleteQueueItem", { queueItemId: "queue_none" }, { baseRevision: 0 });
      const deleted = await command(
        rig,
        "deleteQueueItem",
        { queueItemId: `queue_${held.envelope.commandId}` },
        { baseRevision: probe.revisionAtDecision },
      );
      expect(deleted.status).toBe("accepted");
      expect(started(rig)).toHaveLength(2);
    });

    it("sim:background wait=MS: ZCode's own background-result turn follows the prompt's turn; startNow preempts it", async () => {
      const rig = await v4Rig(release);
      const prompt = await command(rig, "sendText", { text: "sim:background wait=5000" });
      const first = await rig.events.terminal(1);
      expect(first.payload).toMatchObject({ resultType: "success", inputId: prompt.envelope.commandId });
      const own = await rig.events.waitForSessionEvent("turn.started", 5000, first.seq);
      expect(own.payload).toMatchObject({ inputSource: "background_task", inputVisibility: "model-only" });
      expect(own.payload.inputId).not.toBe(prompt.envelope.commandId);
      await rig.events.waitFor((e) => e.type === "session.event" && e.event.turnId === own.turnId && e.event.type === "model.streaming");
      const now = await command(rig, "sendText", { text: "interrupting", requestedDelivery: "startNow" });
      expect(now.result.delivery).toBe("startNow");
      const cancelled = await rig.events.terminal(2);
      expect(cancelled).toMatchObject({ turnId: own.turnId, payload: { resultType: "cancelled", inputId: own.payload.inputId } });
      expect((await rig.events.terminal(3)).payload.inputId).toBe(now.envelope.commandId);
      expect(await preemptions(rig)).toEqual([
        expect.objectContaining({ turnId: own.turnId, inputId: own.payload.inputId, ownTurn: true, inputSource: "background_task" }),
      ]);
    });

    it("a prompt without a delivery while ZCode runs its own turn queues behind it and preempts nothing", async () => {
      const rig = await v4Rig(release);
      await command(rig, "sendText", { text: "sim:background wait=500" });
      const first = await rig.events.terminal(1);
      const own = await rig.events.waitForSessionEvent("turn.started", 5000, first.seq);
      const prompt = await command(rig, "sendText", { text: "after the background" });
      expect(prompt.result.delivery).toBe("queue");
      expect(await rig.events.terminal(2)).toMatchObject({ turnId: own.turnId, payload: { resultType: "success" } });
      expect((await rig.events.terminal(3)).payload).toMatchObject({
        response: "You said: after the background",
        inputId: prompt.envelope.commandId,
      });
      expect(await preemptions(rig)).toEqual([]);
    });

    it("attachment begin refuses bad names, MIME types with parameters and 0 bytes with chunks; 0/0 commits with no chunk", async () => {
      const rig = await v4Rig(release);
      const base = {
        workspacePath: WS,
        sessionId: rig.sessionId,
        uploadId: "up-x",
        fileName: "a.txt",
        mime: "text/plain",
        totalBytes: 3,
        totalChunks: 1,
        checksum: `sha256:${"0".repeat(64)}`,
      };
      const refused = async (fields: Record<string, unknown>) =>
        expect(rig.conn.agent.attachmentBeginV4({ ...base, ...fields })).rejects.toMatchObject({ code: -32602 });
      await refused({ fileName: "" });
      await refused({ fileName: "x".repeat(256) });
      await refused({ fileName: "a\nb.txt" });
      await refused({ fileName: "a\rb.txt" });
      await refused({ fileName: "a\u0000b.txt" });
      await refused({ mime: "text/plain; charset=utf-8" });
      await refused({ mime: "text plain" });
      await refused({ mime: "a/" });
      await refused({ mime: `text/${"x".repeat(251)}` });
      await refused({ totalBytes: 0, totalChunks: 1 });
      await refused({ totalBytes: 3, totalChunks: 0 });
      expect(await rig.conn.agent.attachmentBeginV4({ ...base, fileName: "x".repeat(255), mime: "application/vnd.a+json" })).toMatchObject({
        state: "staging",
      });
      const ref = await upload(rig, "up-empty", "empty.txt", "text/plain", Buffer.alloc(0));
      expect(ref).toMatch(/^att_/);
    });

    it("what of each attachment reaches the turn: image/video/pdf as refs, other text up to 64 KiB, above that only metadata", async () => {
      const rig = await v4Rig(release);
      const files = [
        { id: "up-1", fileName: "a.png", mime: "image/png", bytes: Buffer.from("png") },
        { id: "up-2", fileName: "doc.pdf", mime: "application/pdf", bytes: Buffer.alloc(70 * 1024, 1) },
        { id: "up-3", fileName: "notes.md", mime: "text/markdown", bytes: Buffer.alloc(64 * 1024, "a") },
        { id: "up-4", fileName: "big.log", mime: "text/plain", bytes: Buffer.alloc(64 * 1024 + 1, "b") },
        { id: "up-5", fileName: "empty.txt", mime: "text/plain", bytes: Buffer.alloc(0) },
      ];
      const attachments: Array<{ ref: string; fileName: string; mime: string; bytes: number }> = [];
      for (const f of files) {
        const ref = await upload(rig, f.id, f.fileName, f.mime, f.bytes);
        attachments.push({ ref, fileName: f.fileName, mime: f.mime, bytes: f.bytes.length });
      }
      const sent = await command(rig, "sendText", { text: "read these", attachments });
      await rig.events.terminal(1);
      expect(started(rig)[0].payload.attachments).toEqual(attachments);
      const reached = ["ref", "ref", "text", "metadata", "text"].map((as, i) => ({
        ...attachments[i],
        as,
        contentReached: as !== "metadata",
      }));
      expect(ofKind(await rig.install.readCallLog(), "turn-attachments")).toEqual([
        expect.objectContaining({
          sessionId: rig.sessionId,
          inputId: sent.envelope.commandId,
          turnId: started(rig)[0].turnId,
          attachments: reached,
        }),
      ]);
    });

    it("v4QueryEvicted: the lost sendText ran; the query answers accepted, revision 0, without a result", async () => {
      const rig = await v4Rig(release, { v4AckLost: true, v4QueryEvicted: true });
      const envelope = {
        commandId: "cmd-lost-1",
        clientId: "sim-test-client",
        sessionId: rig.sessionId,
        type: "sendText",
        payload: { text: "lost" },
        issuedAt: Date.now(),
      };
      // its answer never comes; the pending call is refused when the test's host goes away
      rig.conn.agent.sendConversationCommandV4({ workspacePath: WS, envelope }).catch(() => undefined);
      expect((await rig.events.terminal(1)).payload.inputId).toBe("cmd-lost-1");
      const answer = await rig.conn.agent.queryConversationCommandsV4({
        workspacePath: WS,
        commands: [
          { sessionId: rig.sessionId, commandId: "cmd-lost-1" },
          { sessionId: rig.sessionId, commandId: "never-sent" },
        ],
      });
      expect(answer.results.map((r: Any) => r.result)).toEqual([
        { commandId: "cmd-lost-1", status: "accepted", revisionAtDecision: 0 },
        "unknown",
      ]);
    });

    it("v4QueryUnavailable: the query answers failed fault.command.queryUnavailable", async () => {
      const rig = await v4Rig(release, { v4AckLost: true, v4QueryUnavailable: true });
      const envelope = {
        commandId: "cmd-lost-2",
        clientId: "sim-test-client",
        sessionId: rig.sessionId,
        type: "sendText",
        payload: { text: "lost" },
        issuedAt: Date.now(),
      };
      // its answer never comes; the pending call is refused when the test's host goes away
      rig.conn.agent.sendConversationCommandV4({ workspacePath: WS, envelope }).catch(() => undefined);
      await rig.events.terminal(1);
      const answer = await rig.conn.agent.queryConversationCommandsV4({
        workspacePath: WS,
        commands: [{ sessionId: rig.sessionId, commandId: "cmd-lost-2" }],
      });
      expect(answer.results[0].result).toEqual({
        commandId: "cmd-lost-2",
        status: "failed",
        reasonCode: "fault.command.queryUnavailable",
        revisionAtDecision: 0,
      });
    });

    it("a session not live in the CLI (closed, or unknown) is refused as an ack proto.sessionNotFound; legacy calls keep -32004", async () => {
      const rig = await v4Rig(release);
      await rig.conn.agent.closeSession({ workspacePath: WS, sessionId: rig.sessionId });
      const closed = await command(rig, "sendText", { text: "hello?" });
      expect(closed).toMatchObject({ status: "rejected", reasonCode: "proto.sessionNotFound", revisionAtDecision: 0 });
      expect(await command(rig, "stop", {})).toMatchObject({ status: "rejected", reasonCode: "proto.sessionNotFound" });
      const unknown = await command(rig, "sendText", { text: "anyone?" }, { sessionId: "ses_missing" });
      expect(unknown).toMatchObject({ status: "rejected", reasonCode: "proto.sessionNotFound", revisionAtDecision: 0 });
      await expect(rig.conn.agent.sendPrompt({ workspacePath: WS, sessionId: "ses_missing", content: "x" })).rejects.toMatchObject({
        code: -32004,
      });
      await expect(rig.conn.agent.readSession({ workspacePath: WS, sessionId: rig.sessionId })).rejects.toMatchObject({ code: -32004 });
      expect(started(rig)).toHaveLength(0);
      // resumed, it takes input again
      await rig.conn.agent.resumeSession({ workspacePath: WS, sessionId: rig.sessionId });
      expect((await command(rig, "sendText", { text: "back" })).status).toBe("accepted");
      expect((await rig.events.terminal(1)).payload.response).toBe("You said: back");
    });
  });
}
