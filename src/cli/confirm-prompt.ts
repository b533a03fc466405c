/**
 * A yes/no question in a terminal (`zcode-acp onboard` run by a person, adr/0021): asked only when
 * stdin and stdout are terminals; the answer is one line, "y" or "yes" (any case) accepts, anything
 * else — an empty line, end of input, more than a line's worth of bytes, or no answer within the
 * bound — declines. The default is no.
 */

/** how long a question waits for its answer before it counts as "no" */
export const CONFIRM_TIMEOUT_MS = 10 * 60_000;
/** an answer longer than this is not "y" */
const MAX_ANSWER_BYTES = 256;

/** Whether a person is at the terminal: stdin and stdout are both TTYs. */
export function isInteractive(stdin: NodeJS.ReadableStream, stdout: NodeJS.WritableStream): boolean {
  return (stdin as { isTTY?: boolean }).isTTY === true && (stdout as { isTTY?: boolean }).isTTY === true;
}

export interface ConfirmIo {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  timeoutMs?: number;
}

/** Ask `question` (shown with " [y/N] ") and resolve with the answer; never rejects. The input is paused afterwards. */
export function confirm(question: string, io: ConfirmIo): Promise<boolean> {
  io.output.write(`${question} [y/N] `);
  return new Promise<boolean>((resolve) => {
    let text = "";
    /** `endLine`: the person's Enter did not end the line (end of input, timeout) */
    const finish = (yes: boolean, endLine = false): void => {
      clearTimeout(timer);
      io.input.off("data", onData);
      io.input.off("end", onEnd);
      io.input.off("error", onEnd);
      io.input.pause();
      if (endLine) io.output.write("\n");
      resolve(yes);
    };
    const onData = (chunk: Buffer | string): void => {
      text += typeof chunk === "string" ? chunk : chunk.toString("utf8");
      const nl = text.indexOf("\n");
      if (nl >= 0) finish(/^\s*y(es)?\s*$/i.test(text.slice(0, nl)));
      else if (text.length > MAX_ANSWER_BYTES) finish(false, true);
    };
    const onEnd = (): void => finish(false, true);
    const timer = setTimeout(() => finish(false, true), io.timeoutMs ?? CONFIRM_TIMEOUT_MS);
    io.input.on("data", onData);
    io.input.once("end", onEnd);
    io.input.once("error", onEnd);
    io.input.resume();
  });
}
