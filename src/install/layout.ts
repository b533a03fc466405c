/**
 * Install layouts of docs/runtime-contract.md §1: default roots and the fixed relative paths per platform.
 * Pure functions; reading and confinement happen in resolve-install.ts.
 */
import { join } from "node:path";

export type InstallPlatform = "darwin" | "linux" | "win32";
export const INSTALL_PLATFORMS: readonly InstallPlatform[] = ["darwin", "linux", "win32"];

export interface PlatformLayout {
  /** Electron executable, relative to the root (POSIX separators) */
  executable: string;
  /** resources dir, relative to the root */
  resources: string;
  /** darwin only: the bundle's Info.plist (app version + build), relative to the root */
  infoPlist?: string;
}

export const LAYOUTS: Readonly<Record<InstallPlatform, PlatformLayout>> = {
  darwin: {
    executable: "Contents/Frameworks/ZCode Helper.app/Contents/MacOS/ZCode Helper",
    resources: "Contents/Resources",
    infoPlist: "Contents/Info.plist",
  },
  linux: { executable: "zcode", resources: "resources" },
  win32: { executable: "ZCode.exe", resources: "resources" },
};

/** Paths inside the resources dir (docs/runtime-contract.md §1). */
export const RESOURCE_PATHS = {
  appArchive: "app.asar",
  /** inside the app archive */
  appPackageJson: "package.json",
  cli: "glm/zcode.cjs",
  bundleMeta: "glm/.node-bundle-meta.json",
} as const;

export function isInstallPlatform(platform: string): platform is InstallPlatform {
  return (INSTALL_PLATFORMS as readonly string[]).includes(platform);
}

/**
 * The default install root of a platform, or undefined when it cannot be known
 * (win32 without LOCALAPPDATA).
 */
export function defaultInstallRoot(platform: InstallPlatform, env: NodeJS.ProcessEnv): string | undefined {
  switch (platform) {
    case "darwin":
      return "/Applications/ZCode.app";
    case "linux":
      return "/opt/ZCode";
    case "win32":
      // joined like joinLayout: with this machine's separator (on Windows "\\"; a win32-shaped
      // simulated install under another OS is then found where its LOCALAPPDATA says)
      return env.LOCALAPPDATA ? join(env.LOCALAPPDATA, "Programs", "ZCode") : undefined;
  }
}

/**
 * Joins a layout path (POSIX segments) onto a root with the separator of the machine we run on:
 * the files are opened here, so on Windows this is "\\" and elsewhere "/". (A win32 layout is only
 * ever read on win32, or on another OS in tests of a win32-shaped simulated install.)
 */
export function joinLayout(root: string, relative: string): string {
  return join(root, ...relative.split("/"));
}
