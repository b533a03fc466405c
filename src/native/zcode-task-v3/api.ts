/**
 * The zcode-task-v3 line (ZCode 4.0.0, expected; adr/0024, docs/zcode-host.md §16): a v2 host
 * without the legacy `sendPrompt`, `onDynamicSessionEvent` and `zcode-task` answers. Sessions are
 * still created, resumed, listed, read and closed through the non-V4 calls ZCode keeps, and their
 * settings and catalogue read as on v2; everything about a turn goes through V4: input
 * (`sendText`), reading (the conversation subscription, src/native/v4-read/), answers
 * (`resolveInteraction`), the stop, and the history (rows pages).
 */
import type { HostClient } from "../../host/types.js";
import type { LineOptions } from "../shared/task-line-api.js";
import { TaskV2Api } from "../zcode-task-v2/api.js";

export class TaskV3Api extends TaskV2Api {
  override readonly lineId: string = "zcode-task-v3";

  constructor(host: HostClient, options: LineOptions = {}) {
    // the only read path this line has
    super(host, { ...options, readPath: "v4" });
  }
}
