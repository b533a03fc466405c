/**
 * One typed native API per release line, chosen by the manifest's `protocol.id`
 * (docs/architecture.md, adr/0008). A line id without an implementation here is refused.
 */
import type { HostClient } from "../host/types.js";
import { implementedLineIds } from "../manifest/release-lines.js";
import { BridgeError } from "../util/errors.js";
import type { NativeApi } from "./native-api.js";
import { TaskV1Api } from "./zcode-task-v1/api.js";
import { TaskV2Api } from "./zcode-task-v2/api.js";
import { TaskV3Api } from "./zcode-task-v3/api.js";
import type { LineOptions } from "./shared/task-line-api.js";

const FACTORIES: Readonly<Record<string, (host: HostClient, options: LineOptions) => NativeApi>> = {
  "zcode-task-v1": (host, options) => new TaskV1Api(host, options),
  "zcode-task-v2": (host, options) => new TaskV2Api(host, options),
  "zcode-task-v3": (host, options) => new TaskV3Api(host, options),
};

/** `options.readPath`: the read path a line with both takes (the setting ZCODE_ACP_READ_PATH, src/cli/config.ts) */
export function createNativeApi(lineId: string, host: HostClient, options: LineOptions = {}): NativeApi {
  const factory = FACTORIES[lineId];
  if (!factory) {
    throw new BridgeError(
      "UNSUPPORTED_ZCODE",
      `This ZCode install uses the release line "${lineId}", ` +
        `which this zcode-acp does not implement (it implements ${implementedLineIds().join(", ")}). Update zcode-acp.`,
    );
  }
  return factory(host, options);
}

export type { NativeApi } from "./native-api.js";
export type { LineOptions, ReadPath } from "./shared/task-line-api.js";
