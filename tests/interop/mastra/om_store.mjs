// Mastra's own observational-memory storage for tests/interop/test_{libsql,pg,mongo}_om.py (issue 27): what
// Mastra's store reads of OM records this project wrote, and what it writes itself.
//
// stdin: {"store": "libsql" | "pg" | "mongodb", "file": path (libsql), "url": url, "schema": name (pg),
//         "dbName": name (mongodb), "fresh": path | schema | dbName,
//         "read": [{"threadId": id | null, "resourceId": id}],
//         "write": {"threadId": id, "resourceId": id, "t0": ISO text}}
// stdout: {"read": [{"current": record | null, "history": [records]}],
//          "written": {"current": record, "history": [records], "bufferedError": text | null}}
// Reads run before the write. "fresh" is a new file (schema, database) Mastra only initialises, for comparing
// what it creates.
// Records come out as Mastra returns them (JSON of Dates).
import { LibSQLStore } from '@mastra/libsql';
import { MongoDBStore } from '@mastra/mongodb';
import { PostgresStore } from '@mastra/pg';

function open(request, where) {
  const kind = request.store ?? 'libsql';
  if (kind === 'pg') return new PostgresStore({ id: `om-${where}`, connectionString: request.url, schemaName: where });
  if (kind === 'mongodb') return new MongoDBStore({ id: `om-${where}`, url: request.url, dbName: where });
  return new LibSQLStore({ id: `om-${where}`, url: `file:${where}` });
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const request = await readStdin();
const store = open(request, request.file ?? request.schema ?? request.dbName);
await store.init();
const memory = await store.getStore('memory');

const answer = { read: [], written: null };
for (const { threadId, resourceId } of request.read ?? []) {
  answer.read.push({
    current: (await memory.getObservationalMemory(threadId, resourceId)) ?? null,
    history: await memory.getObservationalMemoryHistory(threadId, resourceId, 10),
  });
}

const w = request.write;
if (w) {
  const t0 = new Date(w.t0);
  const later = (seconds) => new Date(t0.getTime() + seconds * 1000);
  const record = await memory.initializeObservationalMemory({
    threadId: w.threadId,
    resourceId: w.resourceId,
    scope: 'thread',
    config: { observation: { messageTokens: 100 } },
    observedTimezone: 'UTC',
  });
  await memory.updateActiveObservations({
    id: record.id,
    observations: '* mastra observed',
    tokenCount: 4,
    lastObservedAt: later(1),
    observedMessageIds: ['m1'],
  });
  // @mastra/mongodb appends with an aggregation-pipeline update, which FerretDB v1 refuses: reported, not fatal.
  let bufferedError = null;
  await memory.updateBufferedObservations({
    id: record.id,
    chunk: {
      cycleId: 'c1',
      observations: '* buffered by mastra',
      tokenCount: 2,
      messageIds: ['m2'],
      messageTokens: 50,
      lastObservedAt: later(2),
    },
    lastBufferedAtTime: later(3),
  }).catch((error) => {
    bufferedError = String(error?.cause?.message ?? error?.message ?? error);
  });
  await memory.setObservingFlag(record.id, true);
  await memory.updateObservationalMemoryConfig({ id: record.id, config: { observation: { bufferTokens: 10 } } });
  const current = await memory.getObservationalMemory(w.threadId, w.resourceId);
  await memory.createReflectionGeneration({ currentRecord: current, reflection: '* mastra reflected', tokenCount: 3 });
  answer.written = {
    current: await memory.getObservationalMemory(w.threadId, w.resourceId),
    history: await memory.getObservationalMemoryHistory(w.threadId, w.resourceId, 10),
    bufferedError,
  };
}

if (request.fresh) {
  const fresh = open(request, request.fresh);
  await fresh.init();
  await fresh.close?.();
}
await store.close?.();
console.log(JSON.stringify(answer));
process.exit(0);
