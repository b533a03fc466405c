/** V4 helpers for simulator tests: the handshake, one command, uploads and the call-log lines of V4. */
import { createHash, randomUUID } from "node:crypto";
import type { CallLogEntry } from "../../../fixtures/sim-install.js";
import type { Any } from "./host-harness.js";
import { WS, type SessionRig } from "./session-helpers.js";

export const CLIENT = "sim-test-client";

export async function handshake(rig: SessionRig): Promise<Any> {
  const hello = await rig.conn.agent.helloConversationV4({});
  await rig.conn.agent.initializeConversationV4({ kind: "clientHello", protocolVersion: 3, clientId: CLIENT, appVersion: "test" });
  return hello;
}

/** Send one V4 command of the rig's session (extra envelope fields override); the answer carries its envelope. */
export function command(
  rig: SessionRig,
  type: string,
  payload: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<Any> {
  const envelope = { commandId: randomUUID(), clientId: CLIENT, sessionId: rig.sessionId, type, payload, issuedAt: Date.now(), ...extra };
  return rig.conn.agent.sendConversationCommandV4({ workspacePath: WS, envelope }).then((ack: Any) => ({ ...ack, envelope }));
}

export const started = (rig: SessionRig): Any[] => rig.events.sessionEvents().filter((e) => e.type === "turn.started");

/** Upload `bytes` in one chunk (none for 0 bytes) and commit it; resolves to the ref. */
export async function upload(rig: SessionRig, uploadId: string, fileName: string, mime: string, bytes: Buffer): Promise<string> {
  const target = { workspacePath: WS, sessionId: rig.sessionId, uploadId };
  const checksum = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  const chunks = bytes.length === 0 ? 0 : 1;
  await rig.conn.agent.attachmentBeginV4({ ...target, fileName, mime, totalBytes: bytes.length, totalChunks: chunks, checksum });
  if (chunks === 1) await rig.conn.agent.attachmentChunkV4({ ...target, chunkIndex: 0, dataBase64: bytes.toString("base64") });
  const { ref } = await rig.conn.agent.attachmentCommitV4(target);
  return ref as string;
}

export const ofKind = (entries: CallLogEntry[], kind: string): CallLogEntry[] => entries.filter((e) => e.kind === kind);
