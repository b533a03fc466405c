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

const FACTORIES: Readonly<Record<string, (host: HostClient) => NativeApi>> = {
  "zcode-task-v1": (host) => new TaskV1Api(host),
  "zcode-task-v2": (host) => new TaskV2Api(host),
};

export function createNativeApi(lineId: string, host: HostClient): NativeApi {
  const factory = FACTORIES[lineId];
  if (!factory) {
    throw new BridgeError(
      "UNSUPPORTED_ZCODE",
      `This ZCode install uses the release line "${lineId}", ` +
        `which this zcode-acp does not implement (it implements ${implementedLineIds().join(", ")}). Update zcode-acp.`,
    );
  }
  return factory(host);
}

export type { NativeApi } from "./native-api.js";
