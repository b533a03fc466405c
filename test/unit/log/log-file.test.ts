/** The diagnostic log file is private and never reached through a link (adr/0021). */
import { execFileSync } from "node:child_process";
import { chmodSync, closeSync, constants, existsSync, openSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openLogFile } from "../../../src/log/log-file.js";
import { createLogger } from "../../../src/log/logger.js";
import { BridgeError } from "../../../src/util/errors.js";

const posix = process.platform !== "win32";
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "zcode-acp-log-file-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const mode = (file: string): number => statSync(file).mode & 0o777;

describe.runIf(posix)("openLogFile", () => {
  it("creates the file 0600 whatever the umask", () => {
    const file = join(dir, "new.log");
    const before = process.umask(0);
    try {
      closeSync(openLogFile(file).fd);
    } finally {
      process.umask(before);
    }
    expect(mode(file)).toBe(0o600);
  });

  it("refuses a symbolic link (to a file or a missing target) and writes nothing through it", () => {
    const target = join(dir, "target.txt");
    writeFileSync(target, "keep\n");
    const link = join(dir, "link.log");
    symlinkSync(target, link);
    const dangling = join(dir, "dangling.log");
    symlinkSync(join(dir, "nowhere.txt"), dangling);
    for (const path of [link, dangling]) {
      expect(() => openLogFile(path)).toThrow(BridgeError);
      expect(() => openLogFile(path)).toThrow(/is a symbolic link; zcode-acp does not follow links/);
    }
    expect(readFileSync(target, "utf8")).toBe("keep\n");
    expect(existsSync(join(dir, "nowhere.txt"))).toBe(false);
    expect(() => createLogger({ level: "info", file: link })).toThrow(expect.objectContaining({ code: "USAGE" }));
  });

  it("tightens an existing group/other-readable file of ours to 0600 and says so in the log", () => {
    const file = join(dir, "old.log");
    writeFileSync(file, "");
    chmodSync(file, 0o644);
    const logger = createLogger({ level: "info", file });
    logger.info("hello");
    expect(mode(file)).toBe(0o600);
    const records = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records[0]).toMatchObject({ level: "warn", msg: expect.stringContaining("tightened from 0644 to 0600") });
    expect(records[1]).toMatchObject({ msg: "hello" });
  });

  it("leaves a private file and a device as they are", () => {
    const file = join(dir, "private.log");
    writeFileSync(file, "", { mode: 0o600 });
    expect(openLogFile(file).tightened).toBeUndefined();
    const devNull = openLogFile("/dev/null");
    expect(devNull.tightened).toBeUndefined();
    closeSync(devNull.fd);
  });

  it("refuses a FIFO at once, with or without a reader, and a socket (never waits for a reader)", async () => {
    const fifo = join(dir, "pipe.log");
    execFileSync("mkfifo", [fifo]);
    // a reader present (checked first: the open itself succeeds, so this fails fast if it is not refused)
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      expect(() => openLogFile(fifo)).toThrow(/is a FIFO \(named pipe\), not a regular file/);
    } finally {
      closeSync(reader);
    }
    // no reader: refused at once (a blocking open would wait here for a reader)
    expect(() => openLogFile(fifo)).toThrow(
      expect.objectContaining({ code: "USAGE", message: expect.stringMatching(/is a FIFO \(named pipe\), not a regular file/) }),
    );
    const socketPath = join(dir, "sock.log");
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      expect(() => openLogFile(socketPath)).toThrow(/is a socket, not a regular file/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("keeps writing to the file it opened when the path is replaced by a link afterwards", async () => {
    const file = join(dir, "swap.log");
    const other = join(dir, "other.txt");
    writeFileSync(other, "");
    const logger = createLogger({ level: "info", file });
    await rm(file);
    symlinkSync(other, file);
    logger.info("after the swap");
    expect(readFileSync(other, "utf8")).toBe("");
  });
});
