// The second half of `npm run build` (adr/0012-bundled-cli.md): tsc has compiled src/ into
// build/tsc/; esbuild links that JavaScript, with every dependency, into dist/cli/ — the entry
// main.js plus chunks that load on demand (each command, the ACP connection, the host stack, the
// install checks) — and src/runtime/ is copied to dist/runtime/ unchanged: the bootstrap runs in
// ZCode's Electron and stays separate plain JavaScript.
//
// Every chunk sits in dist/cli/, one level below dist/ like the tsc output it was built from, so
// the paths the code resolves from import.meta.url stay right: ../runtime/bootstrap.js,
// ../../package.json, ../../manifests/.
import { cpSync, existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const input = join(root, "build/tsc/cli/main.js");
const dist = join(root, "dist");
if (!existsSync(input)) throw new Error(`${input} is missing: tsc -p tsconfig.build.json runs first`);

rmSync(dist, { recursive: true, force: true });
const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { main: input },
  outdir: join(dist, "cli"),
  chunkNames: "chunk-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // only required inside Electron (@electron/asar picks it when process.versions.electron is set)
  external: ["original-fs"],
  // CommonJS dependencies inside ES-module chunks call require() for Node's built-ins
  banner: {
    js: 'import { createRequire as __zcodeAcpCreateRequire } from "node:module";\nconst require = __zcodeAcpCreateRequire(import.meta.url);',
  },
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
});
cpSync(join(root, "src/runtime"), join(dist, "runtime"), { recursive: true, filter: (path) => !path.endsWith(".ts") });
// what went where (kept out of the package by "files"), for anyone asking why a chunk is large
writeFileSync(join(root, "build/bundle-meta.json"), JSON.stringify(result.metafile, null, 1));
const chunks = readdirSync(join(dist, "cli")).length;
process.stdout.write(`bundle: dist/cli/main.js and ${chunks - 1} chunks, dist/runtime/ copied\n`);
