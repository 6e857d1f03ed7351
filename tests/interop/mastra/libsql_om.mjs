// Mastra's own observational-memory storage for tests/interop/test_libsql_om.py (issue 27): what
// @mastra/libsql's LibSQLStore reads of OM records this project wrote, and what it writes itself.
//
// stdin: {"file": path, "fresh": path,
//         "read": [{"threadId": id | null, "resourceId": id}],
//         "write": {"threadId": id, "resourceId": id, "t0": ISO text}}
// stdout: {"read": [{"current": record | null, "history": [records]}],
//          "written": {"current": record, "history": [records], "claims": [bool | null, ...]}}
// Reads run before the write. "fresh" is a new file Mastra only initialises (its schema, for comparison).
// Records come out as Mastra returns them (JSON of Dates).
import { LibSQLStore } from '@mastra/libsql';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const request = await readStdin();
const store = new LibSQLStore({ id: 'interop-om', url: `file:${request.file}` });
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
  });
  await memory.setObservingFlag(record.id, true);
  await memory.updateObservationalMemoryConfig({ id: record.id, config: { observation: { bufferTokens: 10 } } });
  const current = await memory.getObservationalMemory(w.threadId, w.resourceId);
  await memory.createReflectionGeneration({ currentRecord: current, reflection: '* mastra reflected', tokenCount: 3 });
  answer.written = {
    current: await memory.getObservationalMemory(w.threadId, w.resourceId),
    history: await memory.getObservationalMemoryHistory(w.threadId, w.resourceId, 10),
  };
}

if (request.fresh) {
  const fresh = new LibSQLStore({ id: 'interop-om-fresh', url: `file:${request.fresh}` });
  await fresh.init();
}
console.log(JSON.stringify(answer));
