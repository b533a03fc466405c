/**
 * A transcript of one ACP connection: every raw line in both directions, validated as it is
 * recorded (docs/acp.md §9–§10). Requests are matched to responses through a per-direction map of
 * request id → method, so each response is checked against its own result definition.
 */
import type { ClientCapabilities } from "@agentclientprotocol/sdk";
import {
  AGENT_OUTBOUND_PARAMS,
  AGENT_RESULTS,
  CLIENT_OUTBOUND_PARAMS,
  CLIENT_RESULTS,
  capabilityProblem,
  checkUpdateKeys,
  UNSTABLE_UPDATES,
  validateDefinition,
  validateUnstableDefinition,
} from "./acp-schema.js";

export type Direction = "agent" | "client";

/** What a transcript checks each line against: one protocol version's schema and rules (v1 by default; v2: ./acp-v2-schema.ts). */
export interface TranscriptRules {
  name: string;
  agentOutboundParams: Record<string, string>;
  agentResults: Record<string, string>;
  clientOutboundParams: Record<string, string>;
  clientResults: Record<string, string>;
  validate(definition: string, value: unknown): string[];
  checkUpdateKeys(update: Record<string, unknown>): string[];
  capabilityProblem(method: string, params: any, caps: any): string | undefined;
  /** the client capabilities in its initialize params */
  clientCapabilitiesOf(params: any): any;
}

export const V1_RULES: TranscriptRules = {
  name: "v1",
  agentOutboundParams: AGENT_OUTBOUND_PARAMS,
  agentResults: AGENT_RESULTS,
  clientOutboundParams: CLIENT_OUTBOUND_PARAMS,
  clientResults: CLIENT_RESULTS,
  validate: validateDefinition,
  checkUpdateKeys,
  capabilityProblem,
  clientCapabilitiesOf: (params) => params?.clientCapabilities ?? {},
};

export interface TranscriptLine {
  /** who wrote the line: "agent" = the CLI's stdout, "client" = our writes to its stdin */
  from: Direction;
  raw: string;
  /** parsed JSON, undefined if the line was not JSON */
  message: any;
  at: number;
}

export class Transcript {
  readonly lines: TranscriptLine[] = [];
  readonly problems: string[] = [];
  /** capabilities the client advertised (for gating checks) */
  clientCapabilities: ClientCapabilities = {};
  private readonly pending: Record<Direction, Map<string, string>> = { agent: new Map(), client: new Map() };
  private readonly answered: Record<Direction, Set<string>> = { agent: new Set(), client: new Set() };
  private readonly listeners = new Set<(line: TranscriptLine) => void>();

  constructor(private readonly rules: TranscriptRules = V1_RULES) {}

  /** Record and check one raw line written by `from`. */
  record(from: Direction, raw: string): void {
    if (raw.trim() === "") return;
    let message: any;
    try {
      message = JSON.parse(raw);
    } catch {
      this.problem(from, `not JSON: ${raw.slice(0, 200)}`);
    }
    const line: TranscriptLine = { from, raw, message, at: Date.now() };
    this.lines.push(line);
    if (message !== undefined) this.check(from, message);
    for (const listener of this.listeners) listener(line);
  }

  onLine(listener: (line: TranscriptLine) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Parsed messages written by the agent. */
  agentMessages(): any[] {
    return this.lines.filter((l) => l.from === "agent" && l.message !== undefined).map((l) => l.message);
  }

  /** Requests of either side that never got an answer. */
  unanswered(from: Direction): string[] {
    return [...this.pending[from].entries()].map(([id, method]) => `${method}#${id}`);
  }

  private problem(from: Direction, text: string): void {
    this.problems.push(`[${from}] ${text}`);
  }

  private check(from: Direction, message: any): void {
    const other: Direction = from === "agent" ? "client" : "agent";
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      return this.problem(from, "a JSON-RPC message must be an object");
    }
    if (message.jsonrpc !== "2.0") this.problem(from, `missing "jsonrpc":"2.0": ${JSON.stringify(message).slice(0, 200)}`);
    const hasId = "id" in message;
    if (typeof message.method === "string") {
      const method = message.method as string;
      const table = from === "agent" ? this.rules.agentOutboundParams : this.rules.clientOutboundParams;
      const definition = table[method];
      if (!definition) {
        if (!method.startsWith("_")) this.problem(from, `unexpected method ${method}`);
      } else {
        // v1's unstable-only updates (plan operations, subagents) are checked against the unstable schema (and gated below)
        const unstable =
          this.rules === V1_RULES &&
          from === "agent" &&
          method === "session/update" &&
          String(message.params?.update?.sessionUpdate) in UNSTABLE_UPDATES;
        const errors = unstable ? validateUnstableDefinition(definition, message.params) : this.rules.validate(definition, message.params);
        for (const error of errors) this.problem(from, `${method}: ${error}`);
      }
      if (from === "agent") {
        const gate = this.rules.capabilityProblem(method, message.params, this.clientCapabilities);
        if (gate) this.problem(from, `capability: ${gate}`);
        if (method === "session/update" && message.params?.update) {
          for (const error of this.rules.checkUpdateKeys(message.params.update)) this.problem(from, error);
        }
      } else if (method === "initialize") {
        this.clientCapabilities = this.rules.clientCapabilitiesOf(message.params);
      }
      if (hasId) {
        const id = JSON.stringify(message.id);
        if (this.pending[from].has(id) || this.answered[from].has(id)) this.problem(from, `request id ${id} reused`);
        this.pending[from].set(id, method);
      }
      return;
    }
    if (!hasId) return this.problem(from, `neither request, notification nor response: ${JSON.stringify(message).slice(0, 200)}`);
    const id = JSON.stringify(message.id);
    const method = this.pending[other].get(id);
    if (!method) return this.problem(from, `response to unknown request id ${id}`);
    this.pending[other].delete(id);
    this.answered[other].add(id);
    if ("error" in message) {
      for (const error of this.rules.validate("Error", message.error)) this.problem(from, `${method} error: ${error}`);
      return;
    }
    if (!("result" in message)) return this.problem(from, `response to ${method} without result or error`);
    const definition = (from === "agent" ? this.rules.agentResults : this.rules.clientResults)[method];
    if (definition) for (const error of this.rules.validate(definition, message.result)) this.problem(from, `${method} result: ${error}`);
    // the legacy `models` beside the config options (src/acp/session-models.ts): as its last schema defined it
    if (definition && this.rules === V1_RULES && typeof message.result?.models === "object" && message.result.models !== null) {
      for (const error of this.rules.validate("SessionModelState", message.result.models)) this.problem(from, `${method} models: ${error}`);
    }
  }
}
