/**
 * README "Try it without ZCode", followed as a newcomer follows it: the section's command
 * (`npm run try -- --dir <dir>`, only the directory differs) makes a simulated install and prints
 * the lines to copy; run as printed, in a shell, the `export`s and the `check` say "supported",
 * and the acpx line drives a session against the simulated install (acpx from the npm registry,
 * as the line says). The Zed, JetBrains and Paseo entries it prints are JSON that start the same
 * agent command line.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { NPM, ROOT } from "./support/packed-package.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const start = readme.indexOf("\n## Try it without ZCode\n");
const section = start < 0 ? "" : readme.slice(start, readme.indexOf("\n## ", start + 1));
const README_DIR = "/tmp/zcode-try";

const work = mkdtempSync(join(tmpdir(), "zcode-acp-try-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('README "Try it without ZCode"', () => {
  it("comes right after Quick start and gives the one command, with the releases `npm run sim -- --help` lists", async () => {
    expect(start).toBeGreaterThan(readme.indexOf("\n## Quick start"));
    expect(readme.indexOf("\n## ", readme.indexOf("\n## Quick start") + 1)).toBe(start);
    expect(section).toContain(`npm run try -- --dir ${README_DIR}`);
    const help = await execa(NPM, ["run", "-s", "sim", "--", "--help"], { cwd: ROOT });
    const releases = /--release ([\w.|]+)/.exec(help.stdout)![1]!.split("|");
    expect(releases.length).toBeGreaterThan(3);
    for (const release of releases) expect(section).toContain(release);
  });

  it("followed verbatim (another directory), its lines check the simulated install and drive a session from acpx", async () => {
    const dir = join(work, "zcode-try");
    const printed = await execa(NPM, ["run", "try", "--", "--dir", dir], { cwd: ROOT });
    const lines = printed.stdout.split("\n");
    const exports = lines.filter((l) => l.startsWith("export "));
    const check = lines.find((l) => / check --zcode-install /.test(l))!;
    const acpx = lines.find((l) => l.startsWith("npx --yes acpx@"))!;
    expect(exports.length).toBeGreaterThan(0);
    expect(check).toContain(join(dir, "ZCode"));
    expect(acpx).toContain(`--zcode-install ${join(dir, "ZCode")}`);

    const ws = mkdtempSync(join(work, "ws-"));
    const shell = (line: string) =>
      execa("sh", ["-c", [...exports, line].join("\n")], {
        cwd: ws,
        reject: false,
        timeout: 150_000,
        env: { npm_config_update_notifier: "false" },
      });
    const checked = await shell(check);
    expect(checked.exitCode, checked.stderr).toBe(0);
    expect(checked.stdout).toMatch(/^ZCode install check: supported/);
    const session = await shell(acpx);
    expect(session.exitCode, session.stderr.slice(-3000)).toBe(0);
    expect(session.stdout).toContain("You said: hello");
    expect(session.stdout).toContain("end_turn");

    // the editor entries: JSON that starts the same command line
    const blocks = printed.stdout.split(/\n(?=# )/).filter((b) => /^# (Zed|JetBrains|Paseo)/.test(b));
    expect(blocks).toHaveLength(3);
    for (const block of blocks) {
      const json = JSON.parse(block.slice(block.indexOf("\n") + 1)) as Record<string, any>;
      const text = JSON.stringify(json);
      expect(text).toContain(join(dir, "ZCode"));
      expect(text).toContain(join(ROOT, "dist", "cli", "main.js"));
    }
    expect(existsSync(join(dir, "ZCode"))).toBe(true);
  }, 200_000);
});
