/**
 * @electron/asar's header reader behind an ES module. @electron/asar is CommonJS; imported
 * dynamically from the bundle (adr/0012-bundled-cli.md) a CommonJS package has only a default
 * export, so app-archive.ts imports this wrapper (on demand: packed archives only), whose static
 * import gives the named export in both the bundle and plain Node.
 */
import { getRawHeader } from "@electron/asar";

export { getRawHeader };
