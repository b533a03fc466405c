/**
 * What the install assessment and onboarding take from the settings: the install root, the
 * manifests, the local store and the fingerprint cache. `env` is the environment their child
 * runs of the ZCode executable get (this process's own).
 */
import type { AssessOptions } from "../compat/assess.js";
import { localManifestDir } from "../manifest/local-store.js";
import { firstUsePinDir } from "../compat/first-use-pins.js";
import type { Config } from "./config.js";
import { fingerprintCacheIn } from "./locations.js";

export function installOptionsFrom(config: Config, env: NodeJS.ProcessEnv): AssessOptions {
  return {
    installRoot: config.zcodeInstall,
    manifestPath: config.manifest,
    localManifestDir: localManifestDir(config.configDir),
    cacheFile: fingerprintCacheIn(config.cacheDir),
    pinDir: firstUsePinDir(config.configDir),
    env,
    readPath: config.readPath,
  };
}
