/**
 * What the RUNNING host serves (adr/0033). The manifest's allowlist (and the host bundle's text it
 * was made from) is the upper bound of what the bridge may call; it is not proof that the host
 * serves it. ZCode's RPC module answers a call of a method its service object lacks with an error
 * whose message starts `Method not found:` (its `ProxyChannel.fromService`, docs/zcode-host.md §3.4);
 * a listen to an event it lacks is dropped on the host side and never fires. So:
 *  - a call answered "Method not found" is learned as not served, for this host incarnation: it is
 *    never sent again to this host (a typed UNSUPPORTED_ZCODE error instead) and `allows` says no;
 *  - an event is learned as not served when its subscription gave nothing within its bound (the
 *    session engine's confirmation: a served legacy session event confirms with its snapshot);
 *  - a probe (`probe`) asks once per incarnation with a params object that names no session, bounded
 *    by PROBE_TIMEOUT_MS: "Method not found" is "unserved", any other answer or error "served", no
 *    answer within the bound "unknown".
 * A new incarnation (a restarted host) starts with nothing learned.
 */
import { BridgeError, isBridgeError } from "../util/errors.js";

/** how long a probe waits for the host's answer before it says "unknown" (a missing event, or a host that never answers) */
export const PROBE_TIMEOUT_MS = 5_000;
/** names learned per incarnation (a host serves a few dozen methods and events) */
const MAX_LEARNED = 256;

const METHOD_NOT_FOUND = /^Method not found: /;

export type Served = "served" | "unserved" | "unknown";

/** ZCode's RPC answer to a call of a method the host's service does not have. */
export function isMethodNotFound(error: unknown): boolean {
  return isBridgeError(error, "HOST_CALL_FAILED") && METHOD_NOT_FOUND.test(error.message);
}

/** The typed error of a call or subscription the running host does not serve. */
export function notServedError(channel: string, name: string, how: string): BridgeError {
  return new BridgeError(
    "UNSUPPORTED_ZCODE",
    `The running ZCode host does not serve ${channel}.${name} (${how}), although this install's manifest allows it: ` +
      "zcode-acp does not use it with this host again. If this build was onboarded, onboard it again (`zcode-acp onboard --probe`).",
    { details: { channel, name, how } },
  );
}

/** What one host incarnation was found not to serve, and the probes it answered. */
export class ServedSurface {
  private readonly unserved = new Map<string, string>();
  private readonly probes = new Map<string, Promise<Served>>();

  constructor(readonly incarnation: number) {}

  /** why `service.name` is known not to be served (undefined: not known so) */
  why(service: string, name: string): string | undefined {
    return this.unserved.get(`${service}.${name}`);
  }

  learn(service: string, name: string, how: string): void {
    const key = `${service}.${name}`;
    if (this.unserved.has(key) || this.unserved.size >= MAX_LEARNED) return;
    this.unserved.set(key, how);
  }

  /** `service.name` → why, for reports */
  learned(): Record<string, string> {
    return Object.fromEntries(this.unserved);
  }

  /** One probe of `service.method` per incarnation; `ask` sends it (bounded by its own timeout). */
  probe(service: string, method: string, ask: () => Promise<unknown>): Promise<Served> {
    const key = `${service}.${method}`;
    if (this.unserved.has(key)) return Promise.resolve("unserved");
    let probe = this.probes.get(key);
    if (probe === undefined) {
      probe = ask().then(
        () => "served" as const,
        (error: unknown) => {
          if (isMethodNotFound(error)) {
            this.learn(service, method, "the host answered a probe with “Method not found”");
            return "unserved" as const;
          }
          // a timeout, a lost host: nothing learned (the next incarnation probes again)
          return isBridgeError(error, "HOST_CALL_FAILED") ? ("served" as const) : ("unknown" as const);
        },
      );
      if (this.probes.size < MAX_LEARNED) this.probes.set(key, probe);
    }
    return probe;
  }
}
