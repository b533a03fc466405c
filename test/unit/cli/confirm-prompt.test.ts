/** The yes/no question of an interactive `zcode-acp onboard` (adr/0021): only "y"/"yes" accepts. */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { confirm, isInteractive } from "../../../src/cli/confirm-prompt.js";

function ask(feed: (input: PassThrough) => void, timeoutMs?: number): Promise<{ yes: boolean; shown: string }> {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = "";
  output.on("data", (chunk: Buffer) => (shown += chunk.toString("utf8")));
  const answer = confirm("Pin it?", { input, output, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
  feed(input);
  return answer.then((yes) => ({ yes, shown }));
}

describe("confirm", () => {
  it.each(["y\n", "Y\n", "yes\n", " YES \r\n"])("accepts %j", async (line) => {
    const { yes, shown } = await ask((input) => input.write(line));
    expect(yes).toBe(true);
    expect(shown).toBe("Pin it? [y/N] ");
  });

  it.each(["\n", "n\n", "no\n", "yess\n", "sure\n"])("declines %j", async (line) => {
    expect((await ask((input) => input.write(line))).yes).toBe(false);
  });

  it("declines at the end of input, after an answer of more than a line's worth, and when nobody answers in time", async () => {
    expect((await ask((input) => input.end())).yes).toBe(false);
    expect((await ask((input) => input.write("y".repeat(300)))).yes).toBe(false);
    const late = await ask(() => undefined, 20);
    expect(late).toEqual({ yes: false, shown: "Pin it? [y/N] \n" });
  });

  it("an answer split over several chunks counts once it ends its line", async () => {
    expect(
      (
        await ask((input) => {
          input.write("y");
          input.write("es");
          input.write("\n");
        })
      ).yes,
    ).toBe(true);
  });
});

describe("isInteractive", () => {
  it("needs both stdin and stdout to be terminals", () => {
    const tty = Object.assign(new PassThrough(), { isTTY: true });
    const pipe = new PassThrough();
    expect(isInteractive(tty, tty)).toBe(true);
    expect(isInteractive(tty, pipe)).toBe(false);
    expect(isInteractive(pipe, tty)).toBe(false);
  });
});
