import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Assessment } from "../../../src/compat/types.js";
import { cacheOffer, readCachedOffer, type OfferLocation } from "../../../src/cli/initialize-offer.js";
import { InstallSessionCalls } from "../../../src/cli/install-session-calls.js";
import { NO_SESSION_CALLS } from "../../../src/native/session-calls.js";

const DELETE_TITLE = { delete: true, setTitle: true, fork: false };

let dir: string;
let location: OfferLocation;
let a: string;
let b: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "zcode-acp-offer-"));
  location = { file: join(dir, "cache", "initialize-offer.json"), key: "key-1" };
  a = join(dir, "a.json");
  b = join(dir, "b.json");
  await writeFile(a, "one");
  await writeFile(b, "two");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const facts = (inputs = [a, b], calls = DELETE_TITLE) => ({ calls, inputs });

describe("the cached initialize offer", () => {
  it("is read back while nothing changed, under its key only", async () => {
    expect(readCachedOffer(location)).toBeUndefined();
    expect(await cacheOffer(location, facts(), async () => facts())).toBe(true);
    expect(readCachedOffer(location)).toEqual(DELETE_TITLE);
    expect(readCachedOffer({ ...location, key: "key-2" })).toBeUndefined();
  });

  it("is a miss once an input changed, disappeared, or a path that was absent appeared", async () => {
    const absent = join(dir, "local");
    expect(await cacheOffer(location, facts([a, absent]), async () => facts([a, absent]))).toBe(true);
    expect(readCachedOffer(location)).toEqual(DELETE_TITLE);
    await mkdir(absent);
    expect(readCachedOffer(location)).toBeUndefined();
    await rm(absent, { recursive: true });
    expect(readCachedOffer(location)).toEqual(DELETE_TITLE);
    await writeFile(a, "ONE");
    expect(readCachedOffer(location)).toBeUndefined();
    expect(await cacheOffer(location, facts(), async () => facts())).toBe(true);
    await rm(b);
    expect(readCachedOffer(location)).toBeUndefined();
  });

  it("is not written when the confirming assessment differs, reads other paths, or an input moved meanwhile", async () => {
    expect(await cacheOffer(location, facts(), async () => undefined)).toBe(false);
    expect(await cacheOffer(location, facts(), async () => facts([a, b], NO_SESSION_CALLS))).toBe(false);
    // other paths at every confirmation: given up after two
    let flip = false;
    let confirmations = 0;
    const unsettled = async () => {
      confirmations++;
      flip = !flip;
      return flip ? facts([a]) : facts();
    };
    expect(await cacheOffer(location, facts(), unsettled)).toBe(false);
    expect(confirmations).toBe(2);
    const moved = await cacheOffer(location, facts(), async () => {
      await writeFile(b, "changed while it was read");
      return facts();
    });
    expect(moved).toBe(false);
    expect(readCachedOffer(location)).toBeUndefined();
  });

  it("is written once the inputs settle (a first start pins the RPC module: the next assessment reads the pin)", async () => {
    const pin = join(dir, "pin.json");
    let confirmations = 0;
    const pinned = async () => {
      confirmations++;
      await writeFile(pin, "{}");
      return facts([a, b, pin]);
    };
    // the pin is written by the first confirmation only when it is missing; later ones read it
    const once = async () => (confirmations === 0 ? pinned() : (confirmations++, facts([a, b, pin])));
    expect(await cacheOffer(location, facts(), once)).toBe(true);
    expect(confirmations).toBe(2);
    expect(readCachedOffer(location)).toEqual(DELETE_TITLE);
  });

  it("ignores a malformed cache file (a miss, never an error)", async () => {
    expect(await cacheOffer(location, facts(), async () => facts())).toBe(true);
    const good = JSON.parse(await readFile(location.file, "utf8")) as Record<string, unknown>;
    for (const bad of [
      "not json",
      JSON.stringify({ ...good, version: 2 }),
      JSON.stringify({ ...good, calls: { delete: true, setTitle: true } }),
      JSON.stringify({ ...good, calls: { ...DELETE_TITLE, extra: true } }),
      JSON.stringify({ ...good, inputs: [] }),
      JSON.stringify({ ...good, inputs: [{ path: a }] }),
      "null",
    ]) {
      await writeFile(location.file, bad);
      expect(readCachedOffer(location)).toBeUndefined();
    }
    await writeFile(location.file, " ".repeat(300 * 1024));
    expect(readCachedOffer(location)).toBeUndefined();
  });
});

/** an assessment whose manifest allows `agent` (and, with V4 commands, zcode-task's real delete: DELETE_TITLE) */
const supported = (agent: string[], inputs: string[]): Assessment =>
  ({
    supported: true,
    message: "",
    steps: [],
    inputs,
    manifest: { protocol: { allowlist: { agent, task: agent.length > 0 ? ["deleteTask", "listDeletedTaskIds"] : [] } } },
  }) as unknown as Assessment;

describe("initialize's session calls with the cached offer", () => {
  it("answers from the cache without waiting for the warm-up; a confirmed assessment is cached for the next start", async () => {
    const first = new InstallSessionCalls(60_000, () => undefined, { location });
    let prepared = 0;
    // no cache yet: the warm-up decides
    const assessment = supported(["sendConversationCommandV4"], [a, b]);
    expect(await first.get(async () => void (prepared++, first.observe(assessment)))).toEqual(DELETE_TITLE);
    await first.remember(assessment, async () => assessment);
    expect(readCachedOffer(location)).toEqual(DELETE_TITLE);

    let hit: unknown;
    const next = new InstallSessionCalls(60_000, () => undefined, { location, onHit: (calls) => (hit = calls) });
    next.prefetch();
    expect(await next.get(() => new Promise<void>(() => {}))).toEqual(DELETE_TITLE);
    expect(hit).toEqual(DELETE_TITLE);
    expect(prepared).toBe(1);
  });

  it("reports and forgets a cached offer the warm-up's assessment does not confirm; the next start waits again", async () => {
    const assessment = supported(["sendConversationCommandV4"], [a, b]);
    expect(await cacheOffer(location, facts(), async () => facts())).toBe(true);
    const stale: unknown[] = [];
    const calls = new InstallSessionCalls(60_000, () => undefined, {
      location,
      onStale: (advertised, offered) => stale.push({ advertised, offered }),
    });
    expect(await calls.get(async () => undefined)).toEqual(DELETE_TITLE);
    // an install that no longer verifies (unsupported), yet no input the cache knew changed
    calls.observe({ ...assessment, supported: false });
    expect(stale).toEqual([{ advertised: DELETE_TITLE, offered: NO_SESSION_CALLS }]);
    await expect.poll(() => readCachedOffer(location)).toBeUndefined();
  });

  it("caches nothing from an unsupported assessment or one without inputs", async () => {
    const calls = new InstallSessionCalls(60_000, () => undefined, { location });
    await calls.remember({ ...supported(["sendConversationCommandV4"], [a]), supported: false }, async () => supported([], [a]));
    expect(readCachedOffer(location)).toBeUndefined();
    const noInputs = new InstallSessionCalls(60_000, () => undefined, { location });
    const without = { ...supported(["sendConversationCommandV4"], [a]), inputs: undefined } as unknown as Assessment;
    await noInputs.remember(without, async () => without);
    expect(readCachedOffer(location)).toBeUndefined();
  });
});
