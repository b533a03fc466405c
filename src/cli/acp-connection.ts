/**
 * The ACP connection of the default command, on the SDK: loaded by acp-command.ts after the
 * early `initialize` answer (if any). stdout carries ACP JSON-RPC only; the host is stopped when
 * stdin closes, on SIGTERM / SIGINT / SIGHUP, or when stdout fails; a host still starting is
 * abandoned then, not waited for, and a second signal exits at once (adr/0019). Our reader (a
 * line over the limit is answered and skipped, a malformed message refused or ignored, never
 * fatal) passes every line through the wire-order gate (src/acp/wire-order.ts) before the SDK
 * sees it; our writer reports outgoing requests to it.
 *
 * After an early answer the SDK still gets the initialize request first (its connection must be
 * initialized, and our handler records the client's capabilities); its answer to that replayed
 * request is kept off stdout, and the rest of the input is held back until then, so no later
 * request is handled before it.
 *
 * The protocol version is decided once, from the client's first line (src/cli/acp-command.ts):
 * an ACP v2 `initialize` is served by the experimental v2 agent (src/acp/v2/, through the SDK's
 * AgentProtocolRouter), everything else by the v1 agent exactly as before (adr/0028). Both sit
 * on the same reader, writer and wire-order gate.
 */
import { createZcodeAgent, type ZcodeAgentOptions } from "../acp/agent-app.js";
import { incomingMessages } from "../acp/incoming-messages.js";
import { wireOrderFor, requestKey } from "../acp/wire-order.js";
import type { ReleaseNotice } from "../acp/release-notices.js";
import type { AnyMessage } from "@agentclientprotocol/sdk";
import type { SessionCalls } from "../native/session-calls.js";
import type { LazyHostClient } from "../host/lazy-host.js";
import { DEFAULT_TIMEOUTS_MS } from "../host/timeouts.js";
import { CurrentLineApi } from "../native/current-line-api.js";
import { registerDiagnostics, registerDiagnosticsV2 } from "../acp/diagnostics.js";
import type { Logger } from "../log/logger.js";
import { heldRowsDiagnostics } from "../native/v4-read/row-store.js";
import { compileSessionValidators } from "../protocol/event-validation.js";
import { createInteractionBroker } from "../session/interactions/index.js";
import { describeError } from "../util/errors.js";
import type { Config } from "./config.js";
import type { EarlyInitialize } from "./early-initialize.js";
import type { EarlyInput } from "./early-input.js";
import { stdoutMessages } from "./stdout-messages.js";
import type { StopRequests } from "./stop-requests.js";

/** After shutdown, a last resort in case something still holds the event loop. */
const EXIT_BACKSTOP_MS = 5_000;
/** how long the input is held for the SDK's answer to the replayed initialize (it takes milliseconds) */
const REPLAY_ANSWER_MS = 5_000;
/**
 * At the end of input, how long the requests already read may take to be answered (a prompt runs to
 * its turn's end) before the sessions are closed (what still runs is answered `cancelled`) and what
 * is left gets an error (adr/0036)
 */
export const EOF_ANSWER_MS = 120_000;
/** after that close, how long the answers it causes may take before the rest is answered with an error */
const EOF_CLOSE_ANSWER_MS = 5_000;

export interface AcpConnectionOptions {
  config: Config;
  logger: Logger;
  host: LazyHostClient;
  input: EarlyInput;
  /** the initialize request answered before the SDK was loaded */
  early: EarlyInitialize | undefined;
  /** the ACP version the client's first line asked for: 2 serves the experimental v2 agent (adr/0028); default 1 */
  protocol?: 1 | 2;
  stop: StopRequests;
  /** a session request is waiting and the host is starting: prepare what that request needs */
  sessionWaiting?: boolean;
  /** the warning-level advisories of the release, as session notices (adr/0021) */
  releaseNotices?: () => readonly ReleaseNotice[];
  /** what the install offers of session management (./install-session-calls.ts) */
  sessionCalls?: () => Promise<SessionCalls>;
}

type Message = Record<string, unknown>;

const isResponse = (message: Message): boolean => !("method" in message) && ("result" in message || "error" in message);

/** a successful initialize answer, v1 (`agentCapabilities`) or v2 (`info`) (the SDK path: the warm-up starts once it went out) */
function isInitializeResult(message: Message): boolean {
  const result = message.result as Message | undefined;
  return (
    isResponse(message) &&
    typeof result === "object" &&
    result !== null &&
    "protocolVersion" in result &&
    ("agentCapabilities" in result || "info" in result)
  );
}

/** what the connection needs of the agent of either protocol */
interface ServedAgent {
  connect(stream: { readable: ReadableStream<AnyMessage>; writable: WritableStream<AnyMessage> }): {
    readonly closed: Promise<void>;
    close(): void;
  };
  cancelSession(sessionId: string): void;
  responseWritten(message: object): void;
  shutdown(): Promise<void>;
  /** v1: the raw initialize params, before the SDK's stable parser drops the unstable capabilities */
  initializeRead?(rawParams: unknown): void;
  /** `$/cancel_request` of one session/prompt cancels that prompt only (both protocols) */
  cancelPrompt(requestId: unknown): void;
  promptRuns(requestId: unknown): boolean;
}

export async function serveAcp(options: AcpConnectionOptions): Promise<number> {
  const { config, logger, host, early, stop } = options;
  // wire order of cancels and interaction answers; `agent` is bound right below
  const wire = wireOrderFor(() => agent, logger.child("wire"));
  const agentOptions: ZcodeAgentOptions = {
    native: new CurrentLineApi(host, { readPath: config.readPath, logger: logger.child("native") }),
    logger,
    createBroker: (brokerLogger) => createInteractionBroker({ logger: brokerLogger }),
    cancelGraceMs: config.cancelGraceMs,
    subscribeConfirmMs: config.timeouts.subscribe ?? DEFAULT_TIMEOUTS_MS.subscribe,
    heldQueueMs: config.timeouts.heldQueue ?? DEFAULT_TIMEOUTS_MS.heldQueue,
    mergeDeltas: config.mergeDeltas,
    defaultCwd: process.cwd(),
    tracker: wire,
    ...(options.releaseNotices ? { releaseNotices: options.releaseNotices } : {}),
    ...(options.sessionCalls ? { sessionCalls: options.sessionCalls } : {}),
    reportsWrites: true,
  };
  let agent: ServedAgent;
  if (options.protocol === 2) {
    // loaded only for a v2 client: v1's start-up does not pay for it
    const { createZcodeAgentV2 } = await import("../acp/v2/agent-v2.js");
    const v2 = createZcodeAgentV2(agentOptions);
    if (config.diagnostics)
      registerDiagnosticsV2(v2.app, {
        sessions: () => v2.diagnostics(),
        host: () => host.diagnostics(),
        v4Rows: heldRowsDiagnostics,
      });
    agent = v2;
  } else {
    const v1 = createZcodeAgent(agentOptions);
    if (config.diagnostics)
      registerDiagnostics(v1.app, { sessions: () => v1.diagnostics(), host: () => host.diagnostics(), v4Rows: heldRowsDiagnostics });
    agent = { ...v1, connect: (stream) => v1.app.connect(stream) };
  }

  let replayed: EarlyInitialize | undefined = early;
  let releaseInput!: () => void;
  const held = new Promise<void>((resolve) => (releaseInput = resolve));
  // the hold is ours and bounded (adr/0019): an SDK that never answers the replayed initialize
  // (or answers it with an id we do not see) delays the input, it does not stop it
  if (early) {
    const timer = setTimeout(() => {
      if (!replayed) return;
      logger.error("the SDK did not answer the replayed initialize; the client's input goes on without it", {
        id: replayed.id,
        waitedMs: REPLAY_ANSWER_MS,
      });
      replayed = undefined;
      releaseInput();
    }, REPLAY_ANSWER_MS);
    timer.unref();
    void held.then(() => clearTimeout(timer));
  }
  let warmedUp = early !== undefined;
  /** requests read and not answered yet (id → method): at the end of input each gets its answer (adr/0036) */
  const unanswered = new Map<string, string>();
  let allAnswered: (() => void) | undefined;
  const answered = (message: Message): void => {
    if (unanswered.size === 0 || !isResponse(message)) return;
    unanswered.delete(requestKey(message.id));
    if (unanswered.size === 0) allAnswered?.();
  };
  /** requests answered INPUT_ENDED at the end of input: the SDK's own late answer is not written too */
  const givenUp = new Set<string>();
  const endOfInputAnswers = new WeakSet<object>();
  const intercept = (message: Message): boolean => {
    if (givenUp.size > 0 && isResponse(message) && givenUp.has(requestKey(message.id)) && !endOfInputAnswers.has(message)) {
      logger.warn("a request answered at the end of input was finished later; its late answer is not written", {
        id: message.id,
      });
      return true;
    }
    if (replayed && isResponse(message) && message.id === replayed.id) {
      answered(message);
      if (`${JSON.stringify(message)}\n` !== replayed.answer) {
        logger.error("the SDK answered the replayed initialize differently from the early answer, which the client got", {
          id: replayed.id,
        });
      }
      replayed = undefined;
      releaseInput();
      return true;
    }
    if (!warmedUp && isInitializeResult(message)) {
      warmedUp = true;
      setImmediate(() => void host.prepare());
    }
    return false;
  };
  // our writer (one string write per message, same bytes, far less garbage) and our reader
  const writable = stdoutMessages(process.stdout, {
    intercept,
    observe: (message) => {
      answered(message);
      return wire.outgoing(message);
    },
    responseWritten: (message) => agent.responseWritten(message),
  });
  const replies = writable.getWriter();
  let inputFailure: Error | undefined;
  const readable = incomingMessages({
    input: options.input.stream(early ? held : undefined),
    reply: (message) => void replies.write(message).catch((e) => logger.warn("transport answer not written", { error: describeError(e) })),
    gate: (read) => {
      if (read.kind === "request") unanswered.set(requestKey(read.id), read.method);
      // the raw capabilities, before the SDK's stable parser drops the unstable ones (plan, subagents)
      if (read.kind === "request" && read.method === "initialize") agent.initializeRead?.(read.message.params);
      return wire.incoming(read);
    },
    logger: logger.child("transport"),
    onEnd: (how) => {
      if (how !== "eof") inputFailure = how;
    },
  });
  /**
   * The end of input (adr/0036): the SDK would close the connection at once and drop what it still
   * handles, so its input ends only once every request read was answered — bounded: then the
   * sessions are closed (a running prompt answers `cancelled`), and what is still open gets an error.
   */
  const answerWhatWasRead = async (): Promise<void> => {
    if (unanswered.size === 0) return;
    logger.info("input ended; answering the requests read before it", { requests: [...unanswered.values()] });
    // the end of input is a stop: a host still starting is not waited for (adr/0019), so a request
    // that needs it is refused with the start's error; a running host serves what was read
    void host.refuseStarts().catch((e) => logger.warn("abandoning the host start failed", { error: describeError(e) }));
    const until = (ms: number): Promise<boolean> =>
      new Promise<boolean>((resolve) => {
        if (unanswered.size === 0) return resolve(true);
        const timer = setTimeout(() => resolve(false), ms);
        timer.unref();
        allAnswered = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
    if (await until(EOF_ANSWER_MS)) return;
    logger.warn("requests read before the end of input are still open; closing the sessions", {
      requests: [...unanswered.values()],
      waitedMs: EOF_ANSWER_MS,
    });
    await agent.shutdown();
    if (await until(EOF_CLOSE_ANSWER_MS)) return;
    for (const [key, method] of unanswered) {
      const error = {
        code: -32603,
        message: `The input ended and ${method} could not be finished in time; it was not completed.`,
        data: { code: "INPUT_ENDED" },
      };
      // exactly once: from here the SDK's own answer to this id, should it still come, is dropped
      givenUp.add(key);
      const answer = { jsonrpc: "2.0", id: JSON.parse(key) as string | number | null, error } as unknown as AnyMessage;
      endOfInputAnswers.add(answer);
      await replies.write(answer).catch((e) => logger.warn("transport answer not written", { error: describeError(e) }));
    }
  };
  const source = readable.getReader();
  const sdkInput = new ReadableStream<AnyMessage>({
    async pull(controller) {
      let next: Awaited<ReturnType<typeof source.read>>;
      try {
        next = await source.read();
      } catch (error) {
        controller.error(error);
        return;
      }
      if (!next.done) return controller.enqueue(next.value);
      await answerWhatWasRead();
      controller.close();
    },
    cancel: (reason) => source.cancel(reason),
  });
  const connection = agent.connect({ readable: sdkInput, writable });
  // while the host starts (another process), compile the validators its first answers need
  if (options.sessionWaiting) setImmediate(compileSessionValidators);

  let stopping: Promise<void> | undefined;
  const shutdown = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      logger.info("shutting down", { reason });
      // a host still starting is ended now, not waited for (adr/0019); a running one stays for
      // the sessions' last calls (denials, stopGeneration)
      const abandoning = host.refuseStarts().catch((e) => logger.warn("abandoning the host start failed", { error: describeError(e) }));
      connection.close();
      releaseInput();
      await agent.shutdown();
      await abandoning;
      await host.close().catch((e) => logger.warn("host close failed", { error: describeError(e) }));
      process.stdin.destroy();
      setTimeout(() => process.exit(process.exitCode ?? 0), EXIT_BACKSTOP_MS).unref();
    })();
    return stopping;
  };
  stop.onStop((reason) => void shutdown(reason));

  await connection.closed.catch((e) => logger.warn("ACP connection failed", { error: describeError(e) }));
  if (inputFailure) logger.error("reading stdin failed; the ACP connection ended", { error: describeError(inputFailure) });
  // recorded as the stop request, so a signal during the shutdown exits at once
  stop.request(inputFailure ? "stdin failed" : "stdin closed");
  await shutdown(inputFailure ? "stdin failed" : "stdin closed");
  stop.dispose();
  return inputFailure ? 1 : 0;
}
