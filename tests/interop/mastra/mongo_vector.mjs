// Mastra's own MongoDB vector store for tests/interop/test_mongo_vector.py (issue 25, item 3's vector half):
// each step of what @mastra/mongodb's MongoDBVector does for Mastra's Memory, run against one database, with
// the server commands that failed during the step (the driver's command monitoring), so the test can say
// exactly which command a server refuses.
//
// stdin: {"url": connection string, "dbName": database name, "indexName": name, "dimension": n,
//         "vectors": [[float]], "metadata": [object], "ids": [string], "queryVector": [float]}
// stdout: {"steps": {step: {"ok": true, "result": ...} | {"ok": false, "error": {...}, "failed": [commands]}},
//          "started": {step: [command names the driver sent]}}
// Steps, in order: createIndex, listIndexes, describeIndex, upsert, query. A failed step does not stop the
// ones after it (each shows what it does on its own). Exit 0 whatever the server answers.
import { MongoDBVector } from '@mastra/mongodb';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const describe = (error) => ({
  name: error?.name,
  id: error?.id,
  message: String(error?.message ?? error),
  cause: error?.cause
    ? {
        name: error.cause?.name,
        message: String(error.cause?.message ?? error.cause),
        code: error.cause?.code,
        codeName: error.cause?.codeName,
      }
    : undefined,
});

const request = await readStdin();
const vector = new MongoDBVector({
  id: 'interop',
  uri: request.url,
  dbName: request.dbName,
  options: { monitorCommands: true, serverSelectionTimeoutMS: 10000 },
});
let current = null;
const failed = {};
const started = {};
vector.client.on('commandStarted', (event) => {
  if (current) (started[current] ??= []).push(event.commandName);
});
vector.client.on('commandFailed', (event) => {
  if (!current) return;
  (failed[current] ??= []).push({
    commandName: event.commandName,
    code: event.failure?.code,
    codeName: event.failure?.codeName,
    message: String(event.failure?.message ?? event.failure),
  });
});

const steps = {};
async function step(name, run) {
  current = name;
  try {
    steps[name] = { ok: true, result: (await run()) ?? null };
  } catch (error) {
    steps[name] = { ok: false, error: describe(error), failed: failed[name] ?? [] };
  } finally {
    current = null;
  }
}

const { indexName, dimension } = request;
try {
  await step('createIndex', () => vector.createIndex({ indexName, dimension, metric: 'cosine' }));
  await step('listIndexes', () => vector.listIndexes());
  await step('describeIndex', () => vector.describeIndex({ indexName }));
  await step('upsert', () =>
    vector.upsert({ indexName, vectors: request.vectors, metadata: request.metadata, ids: request.ids }),
  );
  await step('query', () => vector.query({ indexName, queryVector: request.queryVector, topK: 2 }));
  process.stdout.write(JSON.stringify({ steps, started }));
} finally {
  await vector.disconnect?.();
  await vector.client.close().catch(() => {});
}
