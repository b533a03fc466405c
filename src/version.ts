import { readFileSync } from "node:fs";

/** Our own package version, read once from package.json next to dist/ or src/. */
export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
