import type { CliOptions } from "./options.js";

/** The default command: an ACP agent on stdio (issue 5). */
export async function runAcpCommand(_options: CliOptions): Promise<number> {
  process.stderr.write("zcode-acp: the ACP agent is not implemented yet\n");
  return 1;
}
