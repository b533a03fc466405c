/**
 * Confinement: every path the bridge reads or runs must resolve (after symlinks) inside the real
 * path of the install root. A path that escapes is refused, never followed.
 */
import { constants } from "node:fs";
import { access, open, realpath, stat } from "node:fs/promises";
import { isAbsolute, relative, sep } from "node:path";
import { errnoOf, installProblem } from "./install-problem.js";

export function isInside(rootReal: string, candidateReal: string): boolean {
  const rel = relative(rootReal, candidateReal);
  return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`));
}

export type EntryKind = "file" | "directory" | "executable" | "file-or-directory";

/**
 * Resolves `path` to its real path, refuses it when it escapes `rootReal`, and checks that it is
 * what `kind` says (a readable regular file, a directory, an executable regular file).
 * `label` names the path for people ("glm/zcode.cjs").
 */
export async function confinedEntry(
  rootReal: string,
  path: string,
  label: string,
  kind: EntryKind,
): Promise<{ real: string; isDirectory: boolean }> {
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    const code = errnoOf(error);
    const actual = code === "ENOENT" ? "missing" : `cannot be resolved (${code ?? "error"})`;
    throw installProblem(
      `The ZCode install is incomplete: ${label} is ${actual} (${path}). Reinstall ZCode.`,
      { [label]: { expected: kindText(kind), actual } },
      error,
    );
  }
  if (!isInside(rootReal, real)) {
    throw installProblem(
      `${label} resolves to ${real}, outside the install root ${rootReal}. zcode-acp only uses files inside the install; remove the link or reinstall ZCode.`,
      { [label]: { expected: `inside ${rootReal}`, actual: real } },
    );
  }
  const info = await stat(real);
  const isDirectory = info.isDirectory();
  const wrongType =
    (kind === "directory" && !isDirectory) ||
    ((kind === "file" || kind === "executable") && !info.isFile()) ||
    (kind === "file-or-directory" && !isDirectory && !info.isFile());
  if (wrongType) {
    const actual = isDirectory ? "a directory" : info.isFile() ? "a regular file" : "not a regular file";
    throw installProblem(`The ZCode install is damaged: ${label} is ${actual}, expected ${kindText(kind)}. Reinstall ZCode.`, {
      [label]: { expected: kindText(kind), actual },
    });
  }
  try {
    if (kind === "executable") await access(real, constants.X_OK);
    else if (info.isFile()) await (await open(real, "r")).close();
    else await access(real, constants.R_OK | constants.X_OK);
  } catch (error) {
    const what = kind === "executable" && errnoOf(error) === "EACCES" ? "not executable" : `not readable (${errnoOf(error) ?? "error"})`;
    throw installProblem(
      `The ZCode install is damaged: ${label} is ${what} (${real}). Reinstall ZCode or fix its permissions.`,
      { [label]: { expected: kindText(kind), actual: what } },
      error,
    );
  }
  return { real, isDirectory };
}

function kindText(kind: EntryKind): string {
  switch (kind) {
    case "file":
      return "a readable regular file";
    case "directory":
      return "a readable directory";
    case "executable":
      return "an executable regular file";
    case "file-or-directory":
      return "an archive file or a directory";
  }
}
