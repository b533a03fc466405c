/** What the layout step resolves (docs/runtime-contract.md §1). */
/** Resolved absolute paths of a verified install. */
export interface InstallPaths {
  root: string;
  platform: "darwin" | "linux" | "win32";
  executable: string;
  resourcesDir: string;
  appArchive: string;
  /** true when app.asar is a directory (simulated installs) */
  appArchiveIsDirectory: boolean;
  hostIndex: string;
  rpcModule: string;
  cli: string;
  bundleMeta: string;
  /** darwin only: Contents/Info.plist (app version and build) */
  infoPlist?: string;
  /** the builtin provider config file, when the install has one (the zcode-task-v2 line needs it) */
  builtinProviderConfig?: string;
}
