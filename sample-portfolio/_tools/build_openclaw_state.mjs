// Builds openclaw-2026.9/.openclaw/state/openclaw.sqlite with OpenClaw 2026.9.6's own code: its
// memory write observer's recorder (recordMemoryArtifactWriteProvenance) writes one provenance row
// per file, as OpenClaw does when an agent tool writes it. OpenClaw keys the rows by the
// workspace's real path, so run this again after moving the sample (OPENCLAW_WORKSPACE_AT: key
// them for another path):
//   OPENCLAW_STATE_DIR=$PWD/openclaw-2026.9/.openclaw \
//     node _tools/build_openclaw_state.mjs <node_modules/openclaw>
import fs from "node:fs";
import path from "node:path";

const pkg = process.argv[2];
const home = process.env.OPENCLAW_STATE_DIR;
if (!pkg || !home) throw new Error("usage: OPENCLAW_STATE_DIR=<home> node <this file> <openclaw>");
const version = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version;
if (version !== "2026.9.6") throw new Error(`openclaw ${version}: the sample needs 2026.9.6`);
const chunk = path.join(pkg, "dist", "memory-artifact-provenance-p1TjNKv0.mjs");
const { a: record } = await import(chunk); // recordMemoryArtifactWriteProvenance
fs.rmSync(path.join(home, "state"), { recursive: true, force: true });
const workspace = path.join(home, "workspace");
const keyedAt = process.env.OPENCLAW_WORKSPACE_AT || workspace;
const read = (rel) => fs.readFileSync(path.join(workspace, rel), "utf8");
const observedAt = Date.parse("2026-11-28T21:40:00Z");
const without1830 = (rel) => read(rel).replace(/- 18:30 .*\n/u, "");
// [file, originClass, session, content OpenClaw last wrote (default: the file as it is)]
const rows = [
  ["MEMORY.md", "agent", "agent:main:main"],
  ["USER.md", "untrusted", "agent:main:telegram:group:kite-helpers"],
  ["memory/2026-11-29.md", "agent", "agent:main:main"],
  // Maya's 18:30 line was added by hand after OpenClaw's last write of the log.
  ["memory/2026-11-28.md", "agent", "agent:main:main", without1830("memory/2026-11-28.md")],
  ["memory/2026-11-28-push-outage.md", "untrusted", "agent:main:telegram:group:kite-helpers"],
  ["memory/2026-11-29-release-retro.md", "agent", "agent:main:main"],
];
for (const [rel, originClass, sessionKey, written] of rows) {
  const contentAfter = written ?? read(rel);
  const where = { workspaceDir: keyedAt, relativePath: rel };
  await record({ ...where, contentBefore: "", contentAfter, originClass, observedAt, sessionKey });
}
process.exit(0);
