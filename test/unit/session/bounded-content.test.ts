/**
 * The size marker has one definition, the bootstrap's (src/runtime/bounds.js). The session layer
 * cannot import src/runtime/ (test/architecture/layers.test.ts), so src/session/bounded-content.ts
 * holds a copy: these tests compare the copy with the runtime's byte for byte, so the two cannot
 * drift apart, and pin what a replayed part that is too long looks like.
 */
import { describe, expect, it } from "vitest";
import * as runtime from "../../../src/runtime/bounds.js";
import { boundStrings, boundText, formatBytes, omittedMarker, utf8Head } from "../../../src/session/bounded-content.js";

/** byte counts around every unit boundary, and a spread of others */
const SIZES = [
  ...Array.from({ length: 1100 }, (_, i) => i),
  ...[9_949, 9_950, 9_951, 99_949, 99_950, 99_951, 999_949, 999_950, 999_999, 1_000_000, 1_049_999, 1_050_000],
  ...Array.from({ length: 200 }, (_, i) => Math.floor(1.37 ** i) % 5_000_000_000),
];

describe("the session layer's size marker is the bootstrap's", () => {
  it("formatBytes and omittedMarker give the same text as src/runtime/bounds.js", () => {
    for (const bytes of SIZES) {
      expect(formatBytes(bytes), String(bytes)).toBe(runtime.formatBytes(bytes));
      expect(omittedMarker(bytes), String(bytes)).toBe(runtime.omittedMarker(bytes));
    }
  });

  it("utf8Head cuts where src/runtime/bounds.js cuts (ASCII, 2-, 3- and 4-byte characters)", () => {
    const texts = ["plain ascii text ".repeat(20), "é".repeat(300), "€a".repeat(200), "😀b".repeat(150), "a😀é€".repeat(100)];
    for (const text of texts)
      for (let max = -1; max <= 520; max += 1) expect(utf8Head(text, max), `${text.slice(0, 8)} ${max}`).toBe(runtime.utf8Head(text, max));
  });

  it("a replayed text over 64 KiB keeps its head and ends with the runtime's marker", () => {
    const long = "a".repeat(70_000);
    const cut = boundText(long);
    expect(cut).toBe(`${"a".repeat(65_536)}\n… [zcode-acp: 4.5 kB more not shown]`);
    expect(cut).toBe(runtime.utf8Head(long, 65_536) + runtime.omittedMarker(70_000 - 65_536));
    // a string already cut by the bootstrap (its head and marker) is left as it is
    const fromBootstrap = "b".repeat(65_536 + 200);
    expect(boundText(fromBootstrap)).toBe(fromBootstrap);
    // never splits a surrogate pair
    const emoji = "😀".repeat(20_000);
    const emojiCut = boundText(emoji);
    expect(emojiCut).toBe(runtime.utf8Head(emoji, 65_536) + runtime.omittedMarker(80_000 - 65_536));
    expect(emojiCut.startsWith("😀".repeat(16_384) + "\n…")).toBe(true);
    expect(boundStrings({ output: [long] })).toEqual({ output: [cut] });
  });
});
