import { createHash } from "node:crypto";
import { chmod, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createPackageWithOptions } from "@electron/asar";
import { defaultInstallRoot, isInstallPlatform, joinLayout, LAYOUTS } from "../../../src/install/layout.js";
import { isInside } from "../../../src/install/confine.js";
import { resolveInstall } from "../../../src/install/resolve-install.js";
import { readMember } from "../../../src/install/app-archive.js";
import { sha256OfRange } from "../../../src/install/sha256.js";
import { declaredVersion, readCliVersionFromFile } from "../../../src/install/cli-version.js";
import { probeRoles } from "../../../src/install/rpc-roles.js";
import { readAppVersionFromPlist } from "../../../src/install/app-version.js";
import { createHandInstall, HOST_INDEX, RPC_MODULE, type HandInstall } from "../../support/hand-install.js";

const sha = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");
let install: HandInstall | undefined;
afterEach(async () => {
  await install?.cleanup();
  install = undefined;
});

describe("layouts (docs/runtime-contract.md §1)", () => {
  it("knows exactly darwin, linux and win32 with their default roots", () => {
    expect(["darwin", "linux", "win32"].every(isInstallPlatform)).toBe(true);
    for (const p of ["freebsd", "aix", "android", "openbsd", "sunos", "cygwin", ""]) expect(isInstallPlatform(p)).toBe(false);
    expect(defaultInstallRoot("darwin", {})).toBe("/Applications/ZCode.app");
    expect(defaultInstallRoot("linux", {})).toBe("/opt/ZCode");
    // joined with this machine's separator (on Windows C:\\Users\\a\\AppData\\Local\\Programs\\ZCode)
    expect(defaultInstallRoot("win32", { LOCALAPPDATA: "C:\\Users\\a\\AppData\\Local" })).toBe(
      join("C:\\Users\\a\\AppData\\Local", "Programs", "ZCode"),
    );
    expect(defaultInstallRoot("win32", {})).toBeUndefined();
  });

  it("joins the layout's POSIX segments with the separator of the running machine", () => {
    expect(joinLayout("/Applications/ZCode.app", LAYOUTS.darwin.executable)).toBe(
      join("/Applications/ZCode.app", "Contents", "Frameworks", "ZCode Helper.app", "Contents", "MacOS", "ZCode Helper"),
    );
    expect(joinLayout("/opt/ZCode", LAYOUTS.linux.resources)).toBe(join("/opt/ZCode", "resources"));
    expect(LAYOUTS.win32).toEqual({ executable: "ZCode.exe", resources: "resources" });
  });

  it("confinement compares path segments, not prefixes", () => {
    expect(isInside("/opt/ZCode", "/opt/ZCode")).toBe(true);
    expect(isInside("/opt/ZCode", "/opt/ZCode/resources/app.asar")).toBe(true);
    expect(isInside("/opt/ZCode", "/opt/ZCode-evil/x")).toBe(false);
    expect(isInside("/opt/ZCode", "/opt")).toBe(false);
    expect(isInside("/opt/ZCode", "/opt/ZCode/..foo")).toBe(true);
  });
});

describe("reading a hand-made install", () => {
  it("locates and hashes members of the directory form", async () => {
    install = await createHandInstall();
    const resolved = await resolveInstall("linux", install.root);
    expect(resolved.archive.kind).toBe("directory");
    const loc = await resolved.archive.locate("out/host/chunk-KGXW6KHC.js");
    expect(await sha256OfRange(loc.file, loc.offset, loc.size)).toBe(sha(RPC_MODULE));
    expect(loc.importPath).toBe(loc.file);
  });

  it("locates and hashes members of a packed asar from their offset, without extracting", async () => {
    install = await createHandInstall({ packed: true });
    const resolved = await resolveInstall("linux", install.root);
    expect(resolved.archive.kind).toBe("asar");
    const host = await resolved.archive.locate("out/host/index.js");
    expect(host.file).toBe(resolved.archive.path);
    expect(host.offset).toBeGreaterThan(8);
    expect(await sha256OfRange(host.file, host.offset, host.size)).toBe(sha(HOST_INDEX));
    expect((await readMember(host, 1024)).toString()).toBe(HOST_INDEX);
    expect(host.importPath).toBe(`${resolved.archive.path}/out/host/index.js`);
    await expect(resolved.archive.locate("out/host/missing.js")).rejects.toMatchObject({ code: "UNSUPPORTED_ZCODE" });
    await expect(resolved.archive.locate("out/host")).rejects.toThrow(/a directory inside the archive/);
    await expect(resolved.archive.locate("../x")).rejects.toMatchObject({ code: "UNSUPPORTED_ZCODE" });
  });

  it("refuses a truncated or non-asar archive file", async () => {
    install = await createHandInstall({ packed: true });
    const bytes = await readFile(install.archive);
    await writeFile(install.archive, bytes.subarray(0, bytes.length - 10));
    const locateAll = async () => {
      const resolved = await resolveInstall("linux", install!.root);
      for (const m of ["package.json", "out/host/index.js", "out/host/chunk-KGXW6KHC.js"]) await resolved.archive.locate(m);
    };
    await expect(locateAll()).rejects.toThrow(/points outside the archive/);
    await writeFile(install.archive, "not an archive at all");
    await expect(resolveInstall("linux", install.root)).rejects.toThrow(/not a readable asar archive/);
  });

  it("reads unpacked members beside the archive, under the same confinement", async () => {
    install = await createHandInstall();
    const src = join(install.dir, "src");
    await mkdir(join(src, "out", "host"), { recursive: true });
    await writeFile(join(src, "package.json"), JSON.stringify({ version: "3.11.2" }));
    await writeFile(join(src, "out", "host", "native.js"), "unpacked!");
    await rm(install.archive, { recursive: true });
    await createPackageWithOptions(src, install.archive, { unpack: "**/native.js" });
    const resolved = await resolveInstall("linux", install.root);
    const loc = await resolved.archive.locate("out/host/native.js");
    expect(loc.file).toBe(`${resolved.archive.path}.unpacked/out/host/native.js`);
    expect((await readMember(loc, 100)).toString()).toBe("unpacked!");
    await rm(loc.file);
    await writeFile(join(install.dir, "evil.js"), "outside");
    await symlink(join(install.dir, "evil.js"), loc.file);
    await expect(resolved.archive.locate("out/host/native.js")).rejects.toThrow(/outside the install root/);
  });

  it("refuses a symlink that escapes the root, and accepts one that stays inside", async () => {
    install = await createHandInstall();
    const meta = join(install.resources, "glm", ".node-bundle-meta.json");
    const outside = join(install.dir, "outside-meta.json");
    await writeFile(outside, await readFile(meta));
    await rm(meta);
    await symlink(outside, meta);
    await expect(resolveInstall("linux", install.root)).rejects.toThrow(/outside the install root/);
    await rm(meta);
    await writeFile(join(install.resources, "meta-real.json"), await readFile(outside));
    await symlink("../meta-real.json", meta);
    await expect(resolveInstall("linux", install.root)).resolves.toMatchObject({ bundleMeta: join(install.resources, "meta-real.json") });
  });

  it("reports a missing executable and a non-executable one", async () => {
    install = await createHandInstall();
    await chmod(join(install.root, "zcode"), 0o644);
    await expect(resolveInstall("linux", install.root)).rejects.toThrow(/zcode is not executable/);
    await rm(join(install.root, "zcode"));
    await expect(resolveInstall("linux", install.root)).rejects.toThrow(/zcode is missing/);
  });

  it("a directory that is not an install (the one holding it, the parent of a `zcode` directory) is the wrong path, not a damaged install", async () => {
    install = await createHandInstall();
    const holder = join(install.root, "..");
    const error = await resolveInstall("linux", holder).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(
      /^.+ does not look like a ZCode install \(no resources\/ directory\): a ZCode install holds zcode and resources\/app\.asar\./,
    );
    expect(error?.message).toContain(`Did you mean ${install.root}?`);
    expect(error?.message).not.toMatch(/damaged|incomplete|[Rr]einstall/);
    const parentOfZcodeDir = join(install.dir, "parent");
    await mkdir(join(parentOfZcodeDir, "zcode"), { recursive: true });
    await expect(resolveInstall("linux", parentOfZcodeDir)).rejects.toThrow(
      /does not look like a ZCode install \(no resources\/ directory\).+Point --zcode-install \(or ZCODE_ACP_ZCODE_INSTALL\) at the ZCode install directory\./,
    );
  });

  it("a missing root says how to point at the install", async () => {
    await expect(resolveInstall("linux", "/nonexistent/ZCode")).rejects.toThrow(/--zcode-install DIR/);
  });
});

describe("versions and exports", () => {
  it("reads the one version a CLI file declares, without running it", async () => {
    expect(declaredVersion('const version = "0.16.9";\nprocess.stdout.write(`zcode ${version}`);')).toBe("0.16.9");
    expect(declaredVersion('{"name":"@zcode/cli","version":"0.16.5-beta.1"}')).toBe("0.16.5-beta.1");
    expect(declaredVersion("var VERSION = '1.2.3'; var pkgVersion = \"1.2.3\";")).toBe("1.2.3");
    expect(declaredVersion('version: "1.0.0", dep: { version: "2.0.0" }')).toBeUndefined(); // several: none is guessed
    expect(declaredVersion("zcode agent CLI v0.16.5")).toBeUndefined();
    expect(declaredVersion('subversion = "1.0.0"')).toBeUndefined();
    install = await createHandInstall();
    const cli = join(install.resources, "glm", "zcode.cjs");
    const marker = join(install.dir, "ran");
    await writeFile(cli, `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "");\nconst version = "0.16.7";\n`);
    await expect(readCliVersionFromFile(cli)).resolves.toBe("0.16.7");
    await expect(readCliVersionFromFile(cli, 10)).resolves.toBeUndefined(); // larger than the bound: not read
    await expect(readFile(marker)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("finds the RPC roles by shape inside the executable", async () => {
    install = await createHandInstall();
    const modulePath = join(install.archive, "out", "host", "roles.js");
    await writeFile(
      modulePath,
      [
        "export class MessagePortProtocol { send() {} disconnect() {} }",
        "export const p2 = class ChannelClient { getChannel() {} dispose() {} };",
        "export const svc = { toService() {}, fromService() {} };",
        "export const notAClient = class ChannelClient { getChannel() {} };",
        "export const extra = 3;",
      ].join("\n"),
    );
    const report = await probeRoles({ executable: join(install.root, "zcode"), modulePath, cwd: install.resources, env: process.env });
    expect(report).toEqual({ imported: true, roles: { protocol: ["MessagePortProtocol"], client: ["p2"], service: ["svc"] } });
    const broken = await probeRoles({
      executable: join(install.root, "zcode"),
      modulePath: join(install.archive, "missing.js"),
      cwd: install.resources,
      env: process.env,
    });
    expect(broken.imported).toBe(false);
  });

  it("reads the darwin app version and build from an XML Info.plist", async () => {
    install = await createHandInstall();
    const file = join(install.dir, "Info.plist");
    await writeFile(
      file,
      `<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` +
        `<plist version="1.0"><dict>` +
        `<key>CFBundleShortVersionString</key><string>3.11.2</string><key>CFBundleVersion</key><string>3112.7</string></dict></plist>`,
    );
    await expect(readAppVersionFromPlist(file, "Contents/Info.plist")).resolves.toEqual({
      version: "3.11.2",
      build: "3112.7",
      source: "Contents/Info.plist",
    });
    await writeFile(file, "bplist00\u0000\u0001");
    await expect(readAppVersionFromPlist(file, "Contents/Info.plist")).rejects.toThrow(/binary property list/);
  });
});
