import type { CliOptions } from "./options.js";

/** `zcode-acp check` (issue 3). Exit 0 supported, 1 unsupported, 2 usage. */
export async function runCheckCommand(_options: CliOptions): Promise<number> {
  process.stderr.write("zcode-acp: check is not implemented yet\n");
  return 1;
}
