/**
 * What the install's host offers of session management (src/native/session-calls.ts), for
 * `initialize` to advertise: what a confirmed assessment of the same install offered last time,
 * when none of the paths it was read from changed (./initialize-offer.ts, adr/0026); else read
 * from the first install assessment of the `acp` command (the warm-up's, adr/0013; never a
 * launch). `initialize` waits for that assessment, at most SESSION_CALLS_WAIT_MS; an install that
 * cannot be assessed (none, unsupported, slower than that) offers nothing, so nothing is
 * advertised that could not be served. The warm-up's assessment always runs: it gates the launch,
 * and an offer from the cache that it does not confirm is reported and forgotten (the handlers
 * refuse what the install lacks in any case).
 */
import type { Assessment } from "../compat/types.js";
import { NO_SESSION_CALLS, sessionCallsOf, type SessionCalls } from "../native/session-calls.js";
import { cacheOffer, forgetOffer, readCachedOffer, type OfferFacts, type OfferLocation } from "./initialize-offer.js";

/**
 * how long `initialize` waits for the warm-up assessment: one from the fingerprint cache takes
 * ~10 ms, a first one (child processes, hashing) about a second on an idle machine; well inside
 * the 10 s a registry launch check gives `initialize`
 */
export const SESSION_CALLS_WAIT_MS = 8_000;

/** what a supported assessment offers, and the paths it was read from; undefined: nothing to cache */
export function offerFacts(assessment: Assessment): OfferFacts | undefined {
  if (!assessment.supported || assessment.inputs === undefined) return undefined;
  return { calls: sessionCallsOf(assessment.manifest?.protocol.allowlist), inputs: assessment.inputs };
}

/** does `advertised` claim a call `offered` lacks? */
const claimsMore = (advertised: SessionCalls, offered: SessionCalls): boolean =>
  (advertised.delete && !offered.delete) || (advertised.setTitle && !offered.setTitle) || (advertised.fork && !offered.fork);

export interface OfferCacheHooks {
  /** where the offer is cached */
  location: OfferLocation;
  /** told when the cache answered (debug) */
  onHit?: (calls: SessionCalls) => void;
  /** told when the warm-up's assessment offers less than the cache advertised */
  onStale?: (advertised: SessionCalls, offered: SessionCalls) => void;
  /** told when a confirmed offer was cached */
  onCached?: (calls: SessionCalls) => void;
}

export class InstallSessionCalls {
  private observed: SessionCalls | undefined;
  private decided: Promise<SessionCalls> | undefined;
  /** what the cache answered, when it did */
  private fromCache: SessionCalls | undefined;
  private remembered = false;
  private cacheRead: Promise<SessionCalls | undefined> | undefined;

  constructor(
    private readonly waitMs: number = SESSION_CALLS_WAIT_MS,
    /** told when the wait ended before the assessment (nothing advertised then) */
    private readonly onTimeout: () => void = () => undefined,
    /** the cached offer (./initialize-offer.ts); without it `initialize` always waits for the assessment */
    private readonly cache?: OfferCacheHooks,
  ) {}

  /** Record an assessment; the first one decides (a later launch's assessment does not change what was advertised). */
  observe(assessment: Assessment): void {
    if (this.observed !== undefined) return;
    this.observed = assessment.supported ? sessionCallsOf(assessment.manifest?.protocol.allowlist) : NO_SESSION_CALLS;
    if (this.fromCache !== undefined && this.cache !== undefined && claimsMore(this.fromCache, this.observed)) {
      this.cache.onStale?.(this.fromCache, this.observed);
      void forgetOffer(this.cache.location);
    }
  }

  /**
   * After the warm-up's assessment: cache what it offers when the cache did not already say so,
   * once `confirm` (a second assessment) agrees (./initialize-offer.ts). Once per process; never rejects.
   */
  async remember(assessment: Assessment, confirm: () => Promise<Assessment>): Promise<void> {
    if (this.remembered || this.cache === undefined) return;
    this.remembered = true;
    const facts = offerFacts(assessment);
    if (facts === undefined) return;
    const c = this.fromCache;
    if (c !== undefined && c.delete === facts.calls.delete && c.setTitle === facts.calls.setTitle && c.fork === facts.calls.fork) return;
    const cached = await cacheOffer(this.cache.location, facts, () => confirm().then(offerFacts));
    if (cached) this.cache.onCached?.(facts.calls);
  }

  /**
   * What to advertise: the cached offer when it holds, else once `prepare` (the warm-up: module
   * load and assessment, never rejecting) is done or the wait is over.
   */
  get(prepare: () => Promise<void>): Promise<SessionCalls> {
    this.decided ??= this.fromCacheOr(prepare);
    return this.decided;
  }

  /** Starts reading the cached offer (while the client's first line is awaited); `get` uses it. */
  prefetch(): void {
    if (this.cache !== undefined) this.cacheRead ??= Promise.resolve(readCachedOffer(this.cache.location));
  }

  private async fromCacheOr(prepare: () => Promise<void>): Promise<SessionCalls> {
    this.prefetch();
    const cached = await this.cacheRead;
    if (cached !== undefined) {
      this.fromCache = cached;
      this.cache?.onHit?.(cached);
      return cached;
    }
    return new Promise<SessionCalls>((resolve) => {
      const decide = (): void => resolve(this.observed ?? NO_SESSION_CALLS);
      const timer = setTimeout(() => {
        if (this.observed === undefined) this.onTimeout();
        decide();
      }, this.waitMs);
      timer.unref();
      void prepare().then(
        () => {
          clearTimeout(timer);
          decide();
        },
        () => {
          clearTimeout(timer);
          decide();
        },
      );
    });
  }
}
