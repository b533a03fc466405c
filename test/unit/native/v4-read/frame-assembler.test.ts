import { describe, expect, it } from "vitest";
import { FrameAssembler } from "../../../../src/native/v4-read/frame-assembler.js";
import { crc32Hex } from "../../../../src/native/v4-read/crc32.js";
import { complete, deltas, fragments, logical } from "./frames.js";

const frame = logical(3, 4, deltas({ op: "row.delta", rowId: 1, path: "text", append: "héllo wörld ".repeat(50) }));

describe("V4 frame assembler", () => {
  it("computes the zlib CRC-32", () => {
    expect(crc32Hex(Buffer.from("123456789"))).toBe("cbf43926");
    expect(crc32Hex(Buffer.alloc(0))).toBe("00000000");
  });

  it("delivers a complete frame and drops a repeated or older ordinal", () => {
    const a = new FrameAssembler();
    expect(a.push(complete(1, frame))).toEqual({ kind: "frame", deliveryKind: "online", ordinal: 1, subscriptionId: "sub-1", frame });
    expect(a.push(complete(1, frame))).toEqual({ kind: "none" });
    expect(a.push(complete(2, frame))).toMatchObject({ kind: "frame", ordinal: 2 });
  });

  it("reassembles fragments that arrive out of order, checking bytes and crc32", () => {
    const a = new FrameAssembler();
    const parts = fragments(1, frame, 4);
    expect(a.push(parts[2])).toEqual({ kind: "none" });
    expect(a.push(parts[0])).toEqual({ kind: "none" });
    expect(a.push(parts[3])).toEqual({ kind: "none" });
    expect(a.pending).toBe(1);
    expect(a.push(parts[1])).toEqual({ kind: "frame", deliveryKind: "online", ordinal: 1, subscriptionId: "sub-1", frame });
    expect(a.pending).toBe(0);
  });

  it("refuses a frame whose checksum does not match", () => {
    const a = new FrameAssembler();
    const parts = fragments(1, frame, 2, { badChecksum: true });
    a.push(parts[0]);
    const result = a.push(parts[1]);
    expect(result).toMatchObject({ kind: "fault" });
    expect((result as { reason: string }).reason).toMatch(/crc32/);
  });

  it("refuses fragments that disagree, too many fragments, data that is not base64, and an unknown wire version", () => {
    const a = new FrameAssembler();
    const parts = fragments(1, frame, 2);
    a.push(parts[0]);
    expect(a.push({ ...parts[1], fragmentCount: 3 })).toMatchObject({ kind: "fault" });
    expect(new FrameAssembler().push({ ...parts[0], fragmentCount: 1025 })).toMatchObject({ kind: "fault" });
    expect(new FrameAssembler().push({ ...parts[0], dataBase64: "@@@@" })).toMatchObject({ kind: "fault" });
    expect(new FrameAssembler().push({ ...complete(1, frame), wireVersion: 4 })).toMatchObject({ kind: "fault" });
  });

  it("refuses reassembled bytes that are not UTF-8 or not JSON", () => {
    const bytes = Buffer.from([0xff, 0xfe, 0x7b]);
    const fragment = {
      ...fragments(1, frame, 1)[0],
      logicalBytes: bytes.length,
      checksum: { algorithm: "crc32", value: crc32Hex(bytes) },
      dataBase64: bytes.toString("base64"),
    };
    expect(new FrameAssembler().push(fragment)).toMatchObject({ kind: "fault", reason: expect.stringMatching(/UTF-8/) });
    const text = Buffer.from("{not json", "utf8");
    expect(
      new FrameAssembler().push({
        ...fragment,
        logicalBytes: text.length,
        checksum: { algorithm: "crc32", value: crc32Hex(text) },
        dataBase64: text.toString("base64"),
      }),
    ).toMatchObject({ kind: "fault", reason: expect.stringMatching(/JSON/) });
  });

  it("a recovery frame supersedes an unfinished older frame; any other frame overtaking one is a gap", () => {
    const a = new FrameAssembler();
    a.push(fragments(1, frame, 2)[0]);
    expect(a.push(complete(2, frame, "recovery"))).toMatchObject({ kind: "frame", deliveryKind: "recovery", ordinal: 2 });
    expect(a.pending).toBe(0);
    const b = new FrameAssembler();
    b.push(fragments(1, frame, 2)[0]);
    expect(b.push(complete(2, frame))).toMatchObject({ kind: "fault" });
  });

  it("gives up on a fragmented frame after 30 s", () => {
    let now = 1000;
    const a = new FrameAssembler(() => now);
    a.push(fragments(1, frame, 2)[0]);
    now += 29_999;
    expect(a.expire()).toEqual({ kind: "none" });
    now += 2;
    expect(a.expire()).toMatchObject({ kind: "fault" });
    expect(a.pending).toBe(0);
  });

  it("holds at most 32 assemblies at once", () => {
    const a = new FrameAssembler();
    for (let ordinal = 1; ordinal <= 32; ordinal++) expect(a.push(fragments(ordinal, frame, 2)[0])).toEqual({ kind: "none" });
    expect(a.push(fragments(33, frame, 2)[0])).toMatchObject({ kind: "fault" });
  });
});
