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
} from "./acp-schema.js";

export type Direction = "agent" | "client";

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
      const table = from === "agent" ? AGENT_OUTBOUND_PARAMS : CLIENT_OUTBOUND_PARAMS;
      const definition = table[method];
      if (!definition) {
        if (!method.startsWith("_")) this.problem(from, `unexpected method ${method}`);
      } else {
        // an unstable-only update is checked against the unstable schema (and gated below)
        const unstable =
          from === "agent" && method === "session/update" && String(message.params?.update?.sessionUpdate) in UNSTABLE_UPDATES;
        for (const error of validateDefinition(definition, message.params, unstable ? "unstable" : "stable")) {
          this.problem(from, `${method}: ${error}`);
        }
      }
      if (from === "agent") {
        const gate = capabilityProblem(method, message.params, this.clientCapabilities);
        if (gate) this.problem(from, `capability: ${gate}`);
        if (method === "session/update" && message.params?.update) {
          for (const error of checkUpdateKeys(message.params.update)) this.problem(from, error);
        }
      } else if (method === "initialize") {
        this.clientCapabilities = message.params?.clientCapabilities ?? {};
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
      for (const error of validateDefinition("Error", message.error)) this.problem(from, `${method} error: ${error}`);
      return;
    }
    if (!("result" in message)) return this.problem(from, `response to ${method} without result or error`);
    const definition = (from === "agent" ? AGENT_RESULTS : CLIENT_RESULTS)[method];
    if (definition) for (const error of validateDefinition(definition, message.result)) this.problem(from, `${method} result: ${error}`);
  }
}
