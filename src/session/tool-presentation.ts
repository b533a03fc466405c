/**
 * How a native tool call is shown in ACP: kind, human title, file locations and diff content
 * derived from the tool name and its input, and content derived from its result.
 * Input field names follow docs/zcode-host.md §10; several spellings are accepted because only
 * `Bash.command`, `Read.offset` and `ExitPlanMode.plan` are confirmed publicly.
 */
import { isAbsolute, relative, resolve } from "node:path";
import type { ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";

const KIND_BY_TOOL: Record<string, ToolKind> = {
  read: "read",
  notebookread: "read",
  edit: "edit",
  multiedit: "edit",
  write: "edit",
  notebookedit: "edit",
  bash: "execute",
  bashoutput: "execute",
  killshell: "execute",
  grep: "search",
  glob: "search",
  ls: "search",
  search: "search",
  websearch: "fetch",
  webfetch: "fetch",
  fetch: "fetch",
  agent: "think",
  task: "think",
  todowrite: "think",
  exitplanmode: "switch_mode",
  enterplanmode: "switch_mode",
};

export function toolKind(toolName: string | undefined): ToolKind {
  if (!toolName) return "other";
  return KIND_BY_TOOL[toolName.toLowerCase()] ?? "other";
}

function record(input: unknown): Record<string, unknown> {
  return typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

function firstString(input: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = input[key];
    if (typeof value === "string" && value.length > 0) return value;
  }
  return undefined;
}

function firstNumber(input: Record<string, unknown>, keys: readonly string[]): number | undefined {
  for (const key of keys) {
    const value = input[key];
    if (typeof value === "number" && Number.isFinite(value)) return value;
  }
  return undefined;
}

const PATH_KEYS = ["file_path", "filePath", "path", "notebook_path", "filename"] as const;

/** The file a tool input names, if any (as given by the model). */
function inputPath(input: unknown): string | undefined {
  return firstString(record(input), PATH_KEYS);
}

function shown(path: string, cwd: string): string {
  if (!isAbsolute(path)) return path;
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

function oneLine(text: string, max = 80): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A short human title, e.g. "Run `npm test`", "Read src/a.ts", "Edit README.md". */
export function toolTitle(toolName: string | undefined, input: unknown, cwd: string): string {
  const name = toolName ?? "Tool";
  const data = record(input);
  const path = inputPath(input);
  switch (name.toLowerCase()) {
    case "bash": {
      const command = firstString(data, ["command", "cmd"]);
      return command ? `Run \`${oneLine(command)}\`` : "Run a command";
    }
    case "read":
    case "notebookread":
      return path ? `Read ${shown(path, cwd)}` : "Read a file";
    case "edit":
    case "multiedit":
    case "notebookedit":
      return path ? `Edit ${shown(path, cwd)}` : "Edit a file";
    case "write":
      return path ? `Write ${shown(path, cwd)}` : "Write a file";
    case "grep": {
      const pattern = firstString(data, ["pattern", "query"]);
      return pattern ? `Search for \`${oneLine(pattern)}\`` : "Search";
    }
    case "glob": {
      const pattern = firstString(data, ["pattern"]);
      return pattern ? `Find files \`${oneLine(pattern)}\`` : "Find files";
    }
    case "ls":
      return path ? `List ${shown(path, cwd)}` : "List files";
    case "webfetch":
    case "fetch": {
      const url = firstString(data, ["url"]);
      return url ? `Fetch ${oneLine(url)}` : "Fetch a URL";
    }
    case "websearch": {
      const query = firstString(data, ["query"]);
      return query ? `Web search: ${oneLine(query)}` : "Web search";
    }
    case "agent":
    case "task": {
      const description = firstString(data, ["description", "prompt"]);
      return description ? `Agent: ${oneLine(description)}` : "Run a sub-agent";
    }
    case "todowrite":
      return "Update the to-do list";
    case "exitplanmode":
      return "Ready to leave plan mode";
    case "enterplanmode":
      return "Enter plan mode";
    default:
      return path ? `${name} ${shown(path, cwd)}` : name;
  }
}

/** Locations for clients that follow the agent: the named file, with Read's offset as line. */
export function toolLocations(toolName: string | undefined, input: unknown, cwd: string): ToolCallLocation[] | undefined {
  const path = inputPath(input);
  if (!path) return undefined;
  const location: ToolCallLocation = { path: resolve(cwd, path) };
  if (toolName?.toLowerCase() === "read") {
    const line = firstNumber(record(input), ["offset", "line", "start_line"]);
    if (line !== undefined && Number.isInteger(line) && line >= 0) location.line = Math.max(1, line);
  }
  return [location];
}

/** Diff content for Edit / MultiEdit / Write inputs; empty when the input names no file. */
export function toolDiffs(toolName: string | undefined, input: unknown, cwd: string): ToolCallContent[] {
  const path = inputPath(input);
  if (!path) return [];
  const data = record(input);
  const abs = resolve(cwd, path);
  const edit = (item: Record<string, unknown>): ToolCallContent | undefined => {
    const oldText = firstString(item, ["old_string", "oldString", "old_text", "oldText"]) ?? "";
    const newText = item.new_string ?? item.newString ?? item.new_text ?? item.newText;
    return typeof newText === "string" ? { type: "diff", path: abs, oldText, newText } : undefined;
  };
  switch (toolName?.toLowerCase()) {
    case "edit": {
      const diff = edit(data);
      return diff ? [diff] : [];
    }
    case "multiedit": {
      const edits = Array.isArray(data.edits) ? data.edits : [];
      return edits.map((e) => edit(record(e))).filter((d): d is ToolCallContent => d !== undefined);
    }
    case "write": {
      const content = data.content ?? data.text;
      // oldText is unknown from the live input: null marks the file as written whole.
      return typeof content === "string" ? [{ type: "diff", path: abs, oldText: null, newText: content }] : [];
    }
    default:
      return [];
  }
}

/** Text of a native tool result (`result.content` as a string or text parts). */
export function resultText(result: unknown): string | undefined {
  if (typeof result === "string") return result;
  const data = record(result);
  const content = data.content ?? data.output;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    const texts = content
      .map((part) => (typeof part === "string" ? part : typeof record(part).text === "string" ? (record(part).text as string) : undefined))
      .filter((t): t is string => t !== undefined);
    if (texts.length > 0) return texts.join("\n");
  }
  return undefined;
}

/** Wrap text as ACP tool call content; command output (kind execute) is fenced so clients keep it verbatim. */
export function textContent(text: string, kind: ToolKind = "other"): ToolCallContent {
  const body = kind === "execute" ? fence(text) : text;
  return { type: "content", content: { type: "text", text: body } };
}

function fence(text: string): string {
  let ticks = "```";
  while (text.includes(ticks)) ticks += "`";
  return `${ticks}\n${text}${text.endsWith("\n") ? "" : "\n"}${ticks}`;
}
