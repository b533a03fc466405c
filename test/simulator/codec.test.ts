import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { loadRpcModule, type RpcModule } from "./support/host-harness.js";
import { createSimulatedInstall } from "../../fixtures/sim-install.js";

let rpc: RpcModule;
beforeAll(async () => {
  const install = await createSimulatedInstall({ release: "3.11.2" });
  rpc = await loadRpcModule(install);
  await install.cleanup(); // the module stays loaded
});

const hex = (bytes: Uint8Array): string =>
  Buffer.from(bytes)
    .toString("hex")
    .replace(/(..)(?!$)/g, "$1 ");
const ascii = (text: string): string => hex(new TextEncoder().encode(text));

describe("value codec (docs/zcode-host.md §3.2)", () => {
  it("encodes every tag as documented", () => {
    expect(hex(rpc.serializeValue(undefined))).toBe("00");
    expect(hex(rpc.serializeValue("hé"))).toBe("01 03 68 c3 a9");
    expect(hex(rpc.serializeValue(Uint8Array.of(1, 2, 3)))).toBe("02 03 01 02 03");
    expect(hex(rpc.serializeValue(new rpc.VSBuffer(Uint8Array.of(9))))).toBe("03 01 09");
    expect(hex(rpc.serializeValue([1, "a"]))).toBe("04 02 06 01 01 01 61");
    expect(hex(rpc.serializeValue({ a: 1 }))).toBe(`05 07 ${ascii('{"a":1}')}`);
    expect(hex(rpc.serializeValue(null))).toBe(`05 04 ${ascii("null")}`);
    expect(hex(rpc.serializeValue(true))).toBe(`05 04 ${ascii("true")}`);
    expect(hex(rpc.serializeValue(1.5))).toBe(`05 03 ${ascii("1.5")}`);
    expect(hex(rpc.serializeValue(2 ** 31))).toBe(`05 0a ${ascii("2147483648")}`);
    expect(hex(rpc.serializeValue(0))).toBe("06 00");
    expect(hex(rpc.serializeValue(300))).toBe("06 ac 02");
  });

  it("round-trips every tag", () => {
    const values: unknown[] = [
      undefined,
      "",
      "text ✓",
      [],
      [undefined, 1, "x", [2, [3]]],
      { a: [1, { b: null }] },
      null,
      false,
      true,
      0.25,
      -7,
      2 ** 31 - 1,
      -(2 ** 31),
      2 ** 40,
    ];
    for (const value of values) expect(rpc.deserializeValue(rpc.serializeValue(value))).toEqual(value);
    const bytes = rpc.deserializeValue(rpc.serializeValue(Uint8Array.of(0, 255, 7)));
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect([...bytes]).toEqual([0, 255, 7]);
    const vs = rpc.deserializeValue(rpc.serializeValue(new rpc.VSBuffer(Uint8Array.of(4, 5))));
    expect(vs).toBeInstanceOf(rpc.VSBuffer);
    expect([...vs.buffer]).toEqual([4, 5]);
  });

  it("round-trips negative int32 values (-1 is 06 ff ff ff ff 0f)", () => {
    expect(hex(rpc.serializeValue(-1))).toBe("06 ff ff ff ff 0f");
    expect(rpc.deserializeValue(Uint8Array.from([6, 0xff, 0xff, 0xff, 0xff, 0x0f]))).toBe(-1);
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), (n) => {
        const decoded = rpc.deserializeValue(rpc.serializeValue(n));
        return decoded === n || (n === 0 && decoded === 0);
      }),
    );
  });

  it("writes nested Uint8Array as the base64 marker object and revives it", () => {
    const value = { name: "img", data: Uint8Array.of(104, 105), list: [Uint8Array.of(1)] };
    const bytes = rpc.serializeValue(value);
    expect(bytes[0]).toBe(5);
    const json = new TextDecoder().decode(bytes.slice(bytes.indexOf(0x7b))); // tag 05 + varint length, then JSON
    expect(JSON.parse(json)).toEqual({
      name: "img",
      data: { __zcode_rpc_nested_uint8array_v1: true, base64: "aGk=" },
      list: [{ __zcode_rpc_nested_uint8array_v1: true, base64: "AQ==" }],
    });
    const back = rpc.deserializeValue(bytes);
    expect(back.data).toBeInstanceOf(Uint8Array);
    expect([...back.data]).toEqual([104, 105]);
    expect([...back.list[0]]).toEqual([1]);
    // a Node Buffer nested in JSON takes the same path (not Buffer#toJSON)
    expect(rpc.deserializeValue(rpc.serializeValue({ b: Buffer.from("hi") })).b).toEqual(new Uint8Array([104, 105]));
  });

  it("round-trips arbitrary JSON-like values (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(rpc.deserializeValue(rpc.serializeValue(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 200 },
    );
  });

  it("rejects truncated input and unknown tags instead of reading past the end", () => {
    expect(() => rpc.deserializeValue(Uint8Array.of(1, 5, 0x61))).toThrow(/length exceeds/);
    expect(() => rpc.deserializeValue(Uint8Array.of(4, 2, 6, 1))).toThrow(/unexpected end/);
    expect(() => rpc.deserializeValue(Uint8Array.of(9))).toThrow(/unknown value tag 9/);
    expect(() => rpc.deserializeValue(Uint8Array.of(6, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01))).toThrow(/varint/);
  });
});

describe("frames and byte examples (docs/zcode-host.md §3.3, §3.5)", () => {
  it("Initialize is 04 01 06 c8 01 00", () => {
    expect(hex(rpc.encodeMessage([200], undefined))).toBe("04 01 06 c8 01 00");
  });

  it("a call [100, 0, zcode-agent, initialize] with body [params]", () => {
    const bytes = rpc.encodeMessage([100, 0, "zcode-agent", "initialize"], [{ workspacePath: "/w" }]);
    const header = `04 04 06 64 06 00 01 0b ${ascii("zcode-agent")} 01 0a ${ascii("initialize")}`;
    const body = `04 01 05 16 ${ascii('{"workspacePath":"/w"}')}`;
    expect(hex(bytes)).toBe(`${header} ${body}`);
    expect(rpc.decodeMessage(bytes)).toEqual({ header: [100, 0, "zcode-agent", "initialize"], body: [{ workspacePath: "/w" }] });
  });

  it("success [201, 0] followed by the result", () => {
    expect(hex(rpc.encodeMessage([201, 0], { available: true }))).toBe(`04 02 06 c9 01 06 00 05 12 ${ascii('{"available":true}')}`);
  });

  it("a listen carries the single target object, not an array", () => {
    const target = { workspacePath: "/w", sessionId: "s", deliveryKind: "desktop-continuous", includeSnapshot: true };
    const { header, body } = rpc.decodeMessage(rpc.encodeMessage([102, 1, "zcode-agent", "onDynamicSessionEvent"], target));
    expect(header).toEqual([102, 1, "zcode-agent", "onDynamicSessionEvent"]);
    expect(body).toEqual(target);
  });

  it("recognises only the exact flow-control object", () => {
    expect(rpc.isFlowControl({ __zcodeRpcControl: "connection-flow-v1", state: "saturated" })).toBe(true);
    expect(rpc.isFlowControl({ __zcodeRpcControl: "connection-flow-v1", state: "drained" })).toBe(true);
    expect(rpc.isFlowControl({ __zcodeRpcControl: "connection-flow-v1", state: "other" })).toBe(false);
    expect(rpc.isFlowControl({ __zcodeRpcControl: "connection-flow-v1", state: "drained", extra: 1 })).toBe(false);
  });
});
