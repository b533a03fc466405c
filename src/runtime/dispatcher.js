// Serves the bridge's request frames (docs/runtime-contract.md §4, internal NDJSON envelope):
//   __call      {service, method, params}                   → {id, result} (undefined → null)
//   __subscribe {subscriptionId, service, event, target}    → {id, result: {subscribed: true}}, then event frames
//   __unsubscribe {subscriptionId}                          → {id, result: null}
//   __history   {op: "next" | "close", historyId}           → a piece of a held history (history-pages.js)
// Only the manifest's allowlisted methods and event names are served, and through a command
// method (envelopeTypes) only the listed command types; anything else is refused with
// METHOD_NOT_ALLOWED BEFORE the service is touched. A frame that is not one of these
// requests is a protocol failure: the caller fails closed.
import { project, projectEvent } from "./projections.js";
import { createHistoryPages, HistoryError } from "./history-pages.js";

const REQUEST_METHODS = new Set(["__call", "__subscribe", "__unsubscribe", "__history"]);
const SUBSCRIPTION_ID = /^[A-Za-z0-9_-]{1,64}$/;
const EVENT_NAME = /^onDynamic[A-Z]/;
const EVENT_LIKE = /^on[A-Z]/;
const MAX_SUBSCRIPTIONS = 256;
const MAX_ERROR_MESSAGE = 4000;

function isRecord(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function onlyKeys(value, keys) {
  return Object.keys(value).every((key) => keys.includes(key));
}

function describeThrown(value) {
  if (value instanceof Error || (isRecord(value) && typeof value.message === "string")) {
    const data = {};
    if (typeof value.name === "string") data.name = value.name.slice(0, 200);
    if (typeof value.code === "string" || typeof value.code === "number") data.code = value.code;
    return { message: String(value.message).slice(0, MAX_ERROR_MESSAGE) || "host call failed", data };
  }
  let text;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value);
  } catch {
    text = undefined;
  }
  return { message: (text ?? String(value)).slice(0, MAX_ERROR_MESSAGE) || "host call failed", data: { thrown: typeof value } };
}

/**
 * @param {{ config: ReturnType<import("./config.js").parseBootstrapConfig>,
 *   services: Promise<Record<string, object>>,
 *   send: (frame: object, force?: boolean) => "ok" | "too-large" | "invalid" | "overflow",
 *   isHostGone: () => boolean,
 *   onProtocolFailure: (code: string, message: string) => void }} options
 */
export function createDispatcher(options) {
  const { config, send } = options;
  const subscriptions = new Map(); // subscriptionId → disposable
  const history = createHistoryPages({ frameLimitBytes: config.frameLimitBytes });
  const projectionContext = { frameLimitBytes: config.frameLimitBytes, history };

  const respond = (id, result) => {
    const outcome = send({ id, result: result === undefined ? null : result }, true);
    if (outcome === "too-large") {
      send(
        { id, error: { code: "FRAME_TOO_LARGE", message: `the host's answer exceeds the frame limit of ${config.frameLimitBytes} bytes` } },
        true,
      );
    } else if (outcome === "invalid") {
      send({ id, error: { code: "CHANNEL_PROTOCOL", message: "the host's answer cannot be encoded as JSON" } }, true);
    }
  };
  const refuse = (id, code, message, data) => {
    send(data === undefined ? { id, error: { code, message } } : { id, error: { code, message, data } }, true);
  };

  const endSubscription = (subscriptionId, error) => {
    const disposable = subscriptions.get(subscriptionId);
    if (!disposable) return;
    subscriptions.delete(subscriptionId);
    try {
      disposable.dispose();
    } catch {
      // the host side is already gone
    }
    send({ method: "subscription-end", params: { subscriptionId, error } }, true);
  };

  const serviceKey = (value) => (typeof value === "string" && config.services.includes(value) ? value : undefined);

  async function handleCall(id, params) {
    if (!onlyKeys(params, ["service", "method", "params"])) return refuse(id, "CHANNEL_PROTOCOL", "__call has unknown fields");
    const service = serviceKey(params.service);
    const method = params.method;
    if (service === undefined || typeof method !== "string" || EVENT_LIKE.test(method) || !config.allowlist[service].includes(method)) {
      return refuse(id, "METHOD_NOT_ALLOWED", `${String(params.service)}.${String(method)} is not an allowlisted host method`);
    }
    if (!isRecord(params.params)) return refuse(id, "CHANNEL_PROTOCOL", "__call params must be one JSON object");
    // a command channel (V4 `sendConversationCommandV4`) passes only the envelope types the bridge sends
    const envelopeTypes = config.envelopeTypes[`${service}.${method}`];
    if (envelopeTypes !== undefined) {
      const envelope = params.params.envelope;
      const type = isRecord(envelope) ? envelope.type : undefined;
      if (typeof type !== "string" || !envelopeTypes.includes(type)) {
        return refuse(id, "METHOD_NOT_ALLOWED", `${service}.${method} of command type ${JSON.stringify(type)} is not allowlisted`);
      }
    }
    const services = await options.services;
    const projection = config.projections[`${service}.${method}`];
    // a full history read takes its slot first (history-pages.js): a fifth concurrent load waits
    // for one, or is refused, before the host reads the whole history
    let slot;
    if (projection === "history-pages") {
      try {
        slot = await history.reserve();
      } catch (error) {
        if (error instanceof HistoryError) return refuse(id, error.code, error.message, error.data);
        throw error;
      }
    }
    let result;
    try {
      result = await services[service][method](params.params);
    } catch (error) {
      slot?.cancel();
      // the RPC connection died with the host: the host-exit frame ends this request instead
      if (options.isHostGone()) return;
      const { message, data } = describeThrown(error);
      return refuse(id, "HOST_CALL_FAILED", message, data);
    }
    // results that hold secrets are reduced here, before anything leaves this process
    if (projection !== undefined) {
      try {
        result = project(projection, result, slot === undefined ? projectionContext : { ...projectionContext, history: slot });
      } catch (error) {
        slot?.cancel();
        if (error instanceof HistoryError) return refuse(id, error.code, error.message, error.data);
        return refuse(
          id,
          "HOST_CALL_FAILED",
          `the host's ${service}.${method} answer has an unexpected shape (${describeThrown(error).message})`,
        );
      }
    }
    respond(id, result);
  }

  async function handleSubscribe(id, params) {
    if (!onlyKeys(params, ["subscriptionId", "service", "event", "target"]))
      return refuse(id, "CHANNEL_PROTOCOL", "__subscribe has unknown fields");
    const service = serviceKey(params.service);
    const event = params.event;
    const subscriptionId = params.subscriptionId;
    if (service === undefined || typeof event !== "string" || !EVENT_NAME.test(event) || !config.events[service].includes(event)) {
      return refuse(id, "METHOD_NOT_ALLOWED", `${String(params.service)}.${String(event)} is not an allowlisted host event`);
    }
    if (typeof subscriptionId !== "string" || !SUBSCRIPTION_ID.test(subscriptionId))
      return refuse(id, "CHANNEL_PROTOCOL", "invalid subscriptionId");
    if (!isRecord(params.target)) return refuse(id, "CHANNEL_PROTOCOL", "__subscribe target must be one JSON object");
    if (subscriptions.has(subscriptionId)) return refuse(id, "CHANNEL_PROTOCOL", "subscriptionId already in use");
    if (subscriptions.size >= MAX_SUBSCRIPTIONS) return refuse(id, "CHANNEL_OVERFLOW", "too many subscriptions");
    const services = await options.services;
    // events that could grow with the session (snapshots, tool results) are reduced before framing
    const projection = config.projections[`${service}.${event}`];
    // a splitting projection (a V4 wire frame over the frame limit) gives several events for one
    // (with this subscription's own state: a V4 listener stages ZCode's fragments and tracks rows)
    const context = { ...projectionContext, subscription: {} };
    const reduce = projection === undefined ? (payload) => [payload] : (payload) => projectEvent(projection, payload, context);
    // placeholder first: an event fired while subscribing is already routed
    subscriptions.set(subscriptionId, { dispose() {} });
    let disposable;
    try {
      const subscribe = services[service][event](params.target);
      disposable = subscribe((payload) => {
        if (!subscriptions.has(subscriptionId)) return;
        let events;
        try {
          events = payload === undefined ? [null] : reduce(payload);
        } catch (error) {
          endSubscription(subscriptionId, {
            code: "CHANNEL_PROTOCOL",
            message: `a host event cannot be reduced (${describeThrown(error).message})`,
          });
          return;
        }
        let outcome = "ok";
        for (const event of events) {
          outcome = send({ method: "event", params: { subscriptionId, event } });
          if (outcome !== "ok") break;
        }
        if (outcome === "ok") return;
        const error =
          outcome === "too-large"
            ? { code: "FRAME_TOO_LARGE", message: `a host event exceeds the frame limit of ${config.frameLimitBytes} bytes` }
            : outcome === "overflow"
              ? { code: "CHANNEL_OVERFLOW", message: "the bridge is not reading host events fast enough" }
              : { code: "CHANNEL_PROTOCOL", message: "a host event cannot be encoded as JSON" };
        endSubscription(subscriptionId, error);
      });
    } catch (error) {
      subscriptions.delete(subscriptionId);
      const { message, data } = describeThrown(error);
      return refuse(id, "HOST_CALL_FAILED", message, data);
    }
    if (disposable === null || typeof disposable !== "object" || typeof disposable.dispose !== "function") {
      subscriptions.delete(subscriptionId);
      return refuse(id, "HOST_CALL_FAILED", "the host's event subscription returned no disposable");
    }
    if (!subscriptions.has(subscriptionId)) {
      // ended while subscribing (an oversized first event): the end frame was sent already
      disposable.dispose();
      return refuse(id, "HOST_CALL_FAILED", "the subscription ended while it was being set up");
    }
    subscriptions.set(subscriptionId, disposable);
    respond(id, { subscribed: true });
  }

  function handleUnsubscribe(id, params) {
    if (!onlyKeys(params, ["subscriptionId"]) || typeof params.subscriptionId !== "string") {
      return refuse(id, "CHANNEL_PROTOCOL", "invalid __unsubscribe");
    }
    const disposable = subscriptions.get(params.subscriptionId);
    subscriptions.delete(params.subscriptionId);
    try {
      disposable?.dispose();
    } catch {
      // already gone
    }
    respond(id, null);
  }

  function handleHistory(id, params) {
    if (!onlyKeys(params, ["op", "historyId"]) || (params.op !== "next" && params.op !== "close")) {
      return refuse(id, "CHANNEL_PROTOCOL", "invalid __history");
    }
    try {
      respond(id, params.op === "next" ? history.piece(params.historyId) : history.release(params.historyId));
    } catch (error) {
      if (error instanceof HistoryError) return refuse(id, error.code, error.message);
      throw error;
    }
  }

  return {
    /** One decoded frame from the bridge. */
    handleFrame(frame) {
      if (!isRecord(frame) || !onlyKeys(frame, ["id", "method", "params"])) {
        return options.onProtocolFailure("CHANNEL_PROTOCOL", "unknown frame from the bridge");
      }
      const { id, method, params } = frame;
      if (!Number.isSafeInteger(id) || id <= 0 || !REQUEST_METHODS.has(method) || !isRecord(params)) {
        return options.onProtocolFailure("CHANNEL_PROTOCOL", "unknown frame from the bridge");
      }
      const run =
        method === "__call"
          ? handleCall
          : method === "__subscribe"
            ? handleSubscribe
            : method === "__history"
              ? handleHistory
              : handleUnsubscribe;
      Promise.resolve()
        .then(() => run(id, params))
        .catch((error) => refuse(id, "HOST_CALL_FAILED", describeThrown(error).message));
    },
    /** Dispose every host listener and release every held history (shutdown). */
    disposeAll() {
      history.disposeAll();
      for (const disposable of subscriptions.values()) {
        try {
          disposable.dispose();
        } catch {
          // ignore
        }
      }
      subscriptions.clear();
    },
  };
}
