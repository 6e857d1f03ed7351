// Mastra (TypeScript) + LibSQL on the memory workload of ../memory_workload.py (issue 19).
//
// Usage: node bench.mjs <dir>, where <dir> holds workload.json and vectors.f32 written by
// memory_workload.py (write_mastra_input). The embedder looks every text up in vectors.f32, so Mastra
// gets exactly the hash/384 vectors the Python stores get and pays nothing for a model. Prints one JSON
// line: per-save timings, recall latencies and hit ids per scope, disk bytes, peak RSS. The Python side
// computes the percentiles and recall@k, the same way as for its own stores.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createRequire } from "node:module";
import { Memory } from "@mastra/memory";
import { LibSQLStore, LibSQLVector } from "@mastra/libsql";

const dir = process.argv[2];
const work = JSON.parse(readFileSync(join(dir, "workload.json"), "utf8"));
const raw = readFileSync(join(dir, "vectors.f32"));
const floats = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
const index = new Map(work.texts.map((text, i) => [text, i]));

function vectorOf(text) {
  const i = index.get(text);
  if (i === undefined) {
    // Mastra embedded a text the workload does not have (a chunk, a rewrite): fail, never guess.
    throw new Error(`no vector for text ${JSON.stringify(text.slice(0, 80))}`);
  }
  return Array.from(floats.subarray(i * work.dimension, (i + 1) * work.dimension));
}

// An AI SDK v2 embedding model (what Mastra's `embedder` accepts) backed by the vector file.
const embedder = {
  specificationVersion: "v2",
  provider: "bench",
  modelId: `hash-${work.dimension}`,
  maxEmbeddingsPerCall: 2048,
  supportsParallelCalls: true,
  async doEmbed({ values }) {
    return { embeddings: values.map(vectorOf) };
  },
};

const url = `file:${join(dir, "mastra.db")}`;
const storage = new LibSQLStore({ id: "bench-storage", url });
const vector = new LibSQLVector({ id: "bench-vector", url });
// Record the ids each vector query returns: Mastra's recall gives messages, not its semantic hits.
let lastHits = [];
const query = vector.query.bind(vector);
vector.query = async (params) => {
  const results = await query(params);
  lastHits = results.map((r) => r.metadata?.message_id ?? r.id);
  return results;
};
const recallConfig = { topK: work.topK, messageRange: work.messageRange, scope: "resource" };
const memory = new Memory({
  storage,
  vector,
  embedder,
  options: { lastMessages: work.lastMessages, semanticRecall: recallConfig },
});

for (let t = 0; t < work.threads; t++) {
  const id = `thread-${String(t).padStart(2, "0")}`;
  await memory.createThread({ resourceId: work.resource, threadId: id, title: id });
}

function dbMessages(messages) {
  return messages.map((m) => ({
    id: m.id,
    threadId: m.threadId,
    resourceId: work.resource,
    role: m.role,
    content: { format: 2, parts: [{ type: "text", text: m.content }] },
    createdAt: new Date(m.createdAt),
  }));
}

const saves = [];
for (let start = 0; start < work.messages.length; start += work.saveBatch) {
  const batch = dbMessages(work.messages.slice(start, start + work.saveBatch));
  const t0 = performance.now();
  await memory.saveMessages({ messages: batch });
  saves.push([batch.length, (performance.now() - t0) / 1000]);
}

async function recall(q, scope) {
  lastHits = [];
  const t0 = performance.now();
  await memory.recall({
    threadId: q.threadId,
    resourceId: work.resource,
    vectorSearchString: q.text,
    threadConfig: { semanticRecall: { ...recallConfig, scope } },
  });
  return [performance.now() - t0, lastHits];
}

const [firstRecallMs] = await recall(work.resourceQueries[0], "resource");
const scopes = {};
for (const [scope, queries] of [
  ["resource", work.resourceQueries],
  ["thread", work.threadQueries],
]) {
  const ms = [];
  const hits = [];
  for (const q of queries) {
    const [elapsed, found] = await recall(q, scope);
    ms.push(elapsed);
    hits.push(found);
  }
  scopes[scope] = { ms, hits };
}

// An agent turn: recall in a thread, save the turn there, recall in the same thread again.
const afterSave = { without: [], after: [] };
for (const pair of work.savePairs ?? []) {
  afterSave.without.push((await recall(pair.without, "resource"))[0]);
  await memory.saveMessages({ messages: dbMessages(pair.turn) });
  afterSave.after.push((await recall(pair.after, "resource"))[0]);
}

let diskBytes = 0;
for (const name of readdirSync(dir)) {
  if (name.startsWith("mastra.db")) diskBytes += statSync(join(dir, name)).size;
}

const require = createRequire(import.meta.url);
const versions = {};
for (const pkg of ["@mastra/core", "@mastra/memory", "@mastra/libsql"]) {
  versions[pkg] = JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), "utf8")).version;
}
versions.node = process.version;

console.log(
  JSON.stringify({
    versions,
    saves,
    firstRecallMs,
    scopes,
    afterSave,
    diskBytes,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  }),
);
process.exit(0);
