/** The summary's explanations: what the bridge does for each target and, where one is missed, why. */
import { fmt } from "./lib/stats.js";
import type { ProfileResult } from "./profile.js";
import { TARGETS, type Figures } from "./report.js";

/** the largest areas of a profile window other than idle, "zod 24 ms, …" */
function busiest(figures: Figures, window: number, n = 4): string {
  const areas = figures.startupProfile?.windows[window]?.areas.filter((a) => a.area !== "idle") ?? [];
  return areas
    .slice(0, n)
    .map((a) => `${a.area} ${fmt(a.ms, 0)} ms`)
    .join(", ");
}

function idle(figures: Figures, window: number): string {
  return fmt(figures.startupProfile?.windows[window]?.areas.find((a) => a.area === "idle")?.ms ?? 0, 0);
}

/** ms after the spawn of the first timeline entry with this message */
function at(figures: Figures, msg: string): number | undefined {
  return figures.startupTimeline?.entries.find((e) => e.msg === msg)?.ms;
}

function startupNote(figures: Figures): string | undefined {
  const t = TARGETS.startup;
  if (figures.initializeRatio === undefined || figures.sessionNewRatio === undefined || figures.checkRatio === undefined) return undefined;
  const parts: string[] = [
    `- **Start-up** (Node ${figures.startupNode ?? "?"}). \`initialize\` is answered before the ACP SDK loads, ` +
      `with the bytes the SDK would write (adr/0013-early-initialize-and-warm-up.md): ` +
      `${fmt(figures.initializeRatio, 2)}× a bare Node script that answers it (target ${t.initialize}×). ` +
      "The session management calls it advertises come from the cached offer of the unchanged install " +
      "(adr/0026-session-management-and-install-dependent-initialize.md, amendment); the first start after a change waits for the assessment. " +
      "Right after the answer the host modules load and the install is assessed; " +
      "with `session/new` already waiting the host starts before the SDK is loaded, which then loads while the host process starts. " +
      `The CLI is one bundle with on-demand chunks, its validators precompiled, ` +
      `and on Node ≥ 22 its compiled modules cached (adr/0012-bundled-cli.md). ` +
      `\`session/new\`: ${fmt(figures.sessionNewRatio, 2)}× the minimal launch (target ${t.sessionNew}×); ` +
      `a cached \`check\`: ${fmt(figures.checkRatio, 2)}× a bare Node start (target ${t.check}×).`,
  ];
  if (figures.initializeRatio > t.initialize && figures.startupProfile)
    parts.push(`Before initialize the profile shows ${busiest(figures, 0)}.`);
  if (figures.sessionNewRatio > t.sessionNew) {
    const answered = at(figures, "initialize answered before the SDK loaded");
    const modules = at(figures, "host modules loaded");
    const assessed = at(figures, "install assessed");
    const launch = at(figures, "launching the ZCode host");
    const ready = at(figures, "ZCode host ready");
    const timeline = figures.startupTimeline;
    if (
      timeline &&
      answered !== undefined &&
      modules !== undefined &&
      assessed !== undefined &&
      launch !== undefined &&
      ready !== undefined
    ) {
      const minimal =
        figures.minimalSessionNewMs !== undefined && figures.bareInitializeMs !== undefined
          ? figures.minimalSessionNewMs - figures.bareInitializeMs
          : undefined;
      parts.push(
        `Where the rest goes (one start-up, the timeline below): ` +
          `from its initialize answer to its session/new answer the bridge took ${fmt(timeline.sessionNewMs - answered, 0)} ms` +
          (minimal === undefined ? "" : `, the minimal launch about ${fmt(minimal, 0)} ms (medians)`) +
          `. Of the bridge's: ${launch - answered} ms until the launch (host modules ${modules - answered} ms, ` +
          `assessment ${assessed - modules} ms; the minimal launch starts the host as \`session/new\` arrives), ` +
          `${ready - launch} ms for the host to become ready while the bridge loads the SDK on the same two cores ` +
          `(${busiest(figures, 1, 5)}; idle ${idle(figures, 1)} ms in the profile), ` +
          `${fmt(timeline.sessionNewMs - ready, 0)} ms for the host calls of a new session and the answer. ` +
          "What would remove it: launching without execa (node:child_process; its ~245 KB chunk loads before every launch), " +
          "an ACP SDK whose zod schemas are not all built when it loads, " +
          "and Node ≥ 22's compile cache (the start-up sections for Node 22 and 24).",
      );
    } else if (figures.startupProfile) {
      parts.push(
        `Between initialize and session/new the bridge is busy with ${busiest(figures, 1, 6)} and idle ${idle(figures, 1)} ms (waiting for the host).`,
      );
    }
  }
  if (figures.checkRatio > t.check)
    parts.push("A cached `check` loads the install-check chunk and reads the manifests and the fingerprint cache; no child process runs.");
  return parts.join(" ");
}

export function explain(figures: Figures, profiles: ProfileResult[]): string[] {
  const notes: string[] = [];
  if (figures.throughputRatio !== undefined) {
    const unmerged =
      figures.unmergedRatio === undefined
        ? ""
        : ` With merging off the same bridge reaches ${fmt(figures.unmergedRatio * 100, 0)} % of the raw relay.`;
    notes.push(
      "- **Throughput.** While the client is behind (a notification is still being written), " +
        "the session engine merges consecutive text deltas of one message into the queued chunk " +
        "(src/session/update-coalescer.ts: text and order unchanged, at most 64 KiB per chunk, nothing waits for a timer; " +
        "property tests in test/unit/session/update-coalescer.property.test.ts)." +
        `${unmerged} Unmerged, every delta costs a validation, a translation, an SDK notification and a write(2) on stdout; the profiles below show that cost.`,
    );
  }
  if (figures.addedP99Ms !== undefined) {
    const raw =
      figures.rawP99Ms === undefined
        ? ""
        : ` The raw relay's own p99 is ${fmt(figures.rawP99Ms, 2)} ms in the same run: ` +
          `the tails of both paths are pauses (garbage collection, scheduling) on a shared 2-core machine, ` +
          `where the bridge path runs three busy processes (host, bridge, client) and the raw path two.`;
    const lines =
      figures.linesAddedP99Ms === undefined
        ? ""
        : ` Read by a plain line reader instead of the SDK client, the bridge alone adds ${fmt(figures.linesAddedP99Ms, 3)} ms at p99; ` +
          `the rest is the SDK client's own parsing (zod) on the reading side.`;
    const verdict =
      figures.addedP99Ms < TARGETS.addedP99Ms
        ? ""
        : " Missed in this run: the difference of two noisy tails; the p50 difference is the steady per-event cost.";
    notes.push(
      "- **Latency.** At 1,000 events/s nothing is merged (the queue is idle when each delta arrives), so this is the per-event cost of the whole path. " +
        "The tail was the bridge's garbage collector: each notification used to leave about 8.9 KB of garbage " +
        "(4 KB of it the SDK's per-message web-stream writers, whose releaseLock() creates two TypeErrors), now about 5.6 KB " +
        "(src/cli/stdout-messages.ts writes each message to stdout through one shared writer, same bytes; " +
        "the update queue makes no promise per fire-and-forget update)." +
        `${raw}${lines}${verdict}`,
    );
  }
  const startup = startupNote(figures);
  if (startup) notes.push(startup);
  if (figures.rssBytes !== undefined) {
    notes.push(
      `- **Memory.** ${fmt(figures.rssBytes / 1e6, 0)} MB peak for the bridge: ` +
        `the update queue measures its backlog and, above 1 MiB of queued text, its promise holds back the host subscription, ` +
        "so the internal channel stops reading and the backlog waits in the host's pipe " +
        "(bounded there: 64 MiB, then CHANNEL_OVERFLOW) instead of in the bridge's heap. " +
        "Before this change the same run peaked at about 170 MB (every queued update held in a promise chain). " +
        "A host that outruns a slow client for more than 64 MiB ends the turn with CHANNEL_OVERFLOW rather than growing without bound.",
    );
  }
  const hot = profiles[0]?.top
    .slice(0, 3)
    .map((f) => `\`${f.name}\` ${fmt(f.share * 100, 0)} %`)
    .join(", ");
  if (hot) notes.push(`- **Profile.** Top self time of the bridge (merging on): ${hot} (details below).`);
  return notes;
}
