// OpenClaw 2026.9.6's own code on a workspace, for tests/interop/test_openclaw_interop.py. Reads
// one JSON request on stdin, writes one JSON answer on stdout. OPENCLAW_STATE_DIR names
// OpenClaw's home (its state database and config), as for OpenClaw itself.
//
// OpenClaw's dist files are bundled chunks whose exports are renamed; each function is looked up by
// its own name in the chunk's export list. The startup-context loader is not exported by its chunk:
// its region of the chunk (OpenClaw's code, unchanged) is loaded with the chunk's own imports.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const request = JSON.parse(fs.readFileSync(0, "utf8"));
const dist = path.join(request.pkg, "dist");

function exportsOf(source) {
  const lists = [...source.matchAll(/export \{([^}]*)\};?/g)];
  const names = {};
  for (const part of (lists.at(-1)?.[1] ?? "").split(",")) {
    const [name, alias] = part.trim().split(/\s+as\s+/);
    if (name) names[name] = alias ?? name;
  }
  return names;
}

async function load(file, name) {
  const full = path.join(dist, file);
  const alias = exportsOf(fs.readFileSync(full, "utf8"))[name];
  if (!alias) throw new Error(`${name} is not exported by ${file}`);
  return (await import(pathToFileURL(full).href))[alias];
}

async function loadRegion(file, region, name) {
  const source = fs.readFileSync(path.join(dist, file), "utf8");
  const start = source.indexOf(`//#region ${region}`);
  const end = source.indexOf("//#endregion", start);
  if (start < 0 || end < 0) throw new Error(`no region ${region} in ${file}`);
  const base = pathToFileURL(dist).href + "/";
  const imports = source
    .split("\n")
    .filter((line) => line.startsWith("import "))
    .map((line) => line.replace(/"\.\//g, `"${base}`))
    .join("\n");
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), "openclaw-region-"));
  const module = path.join(temp, "region.mjs");
  fs.writeFileSync(module, `${imports}\n${source.slice(start, end)}\nexport { ${name} };\n`);
  try {
    return (await import(pathToFileURL(module).href))[name];
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

const PROVENANCE = "memory-artifact-provenance-p1TjNKv0.mjs";
const CLASSIFIER = "workspace-path-classifier-CdYOoqlD.mjs";
const ws = request.workspace;
const cfg = request.config ?? {};
const out = {};

if (request.record) {
  const record = await load(PROVENANCE, "recordMemoryArtifactWriteProvenance");
  for (const r of request.record) {
    await record({
      workspaceDir: ws,
      relativePath: r.rel,
      contentBefore: r.before,
      contentAfter: r.after,
      originClass: r.originClass ?? "agent",
      observedAt: Date.now(),
      sessionKey: r.sessionKey ?? "agent:main:main",
    });
  }
}
if (request.provenance) {
  const read = await load(PROVENANCE, "readMemoryArtifactProvenance");
  out.provenance = {};
  for (const rel of request.provenance) {
    out.provenance[rel] = (await read({ workspaceDir: ws, relativePath: rel })) ?? null;
  }
}
if (request.bootstrap) {
  // The run's bootstrap files as resolveBootstrapFiles makes them, without its session hooks: the
  // workspace files, MEMORY.md and USER.md dropped when their origin class is not injectable.
  const loadFiles = await load("workspace-DDLxBwAa.mjs", "loadWorkspaceBootstrapFiles");
  const classify = await load(CLASSIFIER, "classifyWorkspaceMemoryPaths");
  const eligible = await load("types-BH9UhQoF.mjs", "isMemoryOriginEligibleForAutomaticInjection");
  const build = await load("bootstrap-Dvw1-bo8.mjs", "buildBootstrapContextFiles");
  const maxChars = await load("bootstrap-Dvw1-bo8.mjs", "resolveBootstrapMaxChars");
  const totalMaxChars = await load("bootstrap-Dvw1-bo8.mjs", "resolveBootstrapTotalMaxChars");
  const files = await loadFiles(ws);
  const isMemory = (f) => !f.missing && (f.name === "MEMORY.md" || f.name === "USER.md");
  const relativePaths = files.filter(isMemory).map((f) => f.name);
  const origins = await classify({ workspaceDir: ws, relativePaths });
  const refused = origins.filter((o) => !eligible(o.originClass));
  const withheld = new Set(refused.map((o) => o.relativePath));
  out.origins = Object.fromEntries(origins.map((o) => [o.relativePath, o.originClass]));
  const setupDone = await load("workspace-DDLxBwAa.mjs", "isWorkspaceSetupCompleted");
  const done = await setupDone(ws, { readOnly: true }).catch(() => false);
  const kept = files.filter((f) => !withheld.has(f.name) && !(done && f.name === "BOOTSTRAP.md"));
  const limits = { maxChars: maxChars(cfg), totalMaxChars: totalMaxChars(cfg) };
  const named = (f) => ({ name: path.basename(f.path), content: f.content });
  out.bootstrap = build(kept, limits).map(named);
}
if (request.startup) {
  const region = "src/auto-reply/reply/startup-context.ts";
  const name = "buildSessionStartupContextPrelude";
  const prelude = await loadRegion("get-reply-DXzvDRjY.mjs", region, name);
  out.startup = await prelude({ workspaceDir: ws, cfg, nowMs: request.nowMs });
}
if (request.indexed) {
  const list = await load("internal-xwKaATp-.mjs", "listMemoryFiles");
  const relative = (p) => path.relative(ws, p).split(path.sep).join("/");
  out.indexed = (await list(ws, [])).map(relative).sort();
}
if (request.memoryGet) {
  const read = await load("read-file-CMAsgHa-.mjs", "readMemoryFile");
  out.memoryGet = {};
  for (const rel of request.memoryGet) {
    try {
      const got = await read({ workspaceDir: ws, relPath: rel, maxChars: 1e6, lines: 1e6 });
      out.memoryGet[rel] = { status: got.status ?? "ok", text: got.text ?? "" };
    } catch (error) {
      out.memoryGet[rel] = { error: String(error?.message ?? error) };
    }
  }
}
process.stdout.write(JSON.stringify(out));
process.exit(0);
