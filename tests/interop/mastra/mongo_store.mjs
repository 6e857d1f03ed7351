// Mastra's own MongoDB storage for tests/interop/test_mongo_storage.py (issue 25, item 3): what
// @mastra/mongodb's MongoDBStore writes to and reads from one database, as a Mastra app does.
//
// stdin: {"url": connection string, "dbName": database name,
//         "write": {"threads": [StorageThreadType], "messages": [MastraDBMessage], "resources": [StorageResourceType]},
//         "read": {"threads": [resourceId], "messages": [threadId], "resources": [resourceId],
//                  "workingMemory": [{"threadId", "resourceId"}]}}
// stdout: {"threads": {resourceId: [threads]}, "messages": {threadId: {"rows": [messages], "prompt": [AI SDK v5
//          prompt built from them]}}, "resources": {resourceId: resource | null},
//          "workingMemory": {resourceId: text | null}}
// Writes run before reads; timestamps go in as ISO text and come out as Mastra returns them (JSON of Dates).
// On failure: {"error": {"name", "message", "code", "cause"}} and exit code 3, so the test can say why.
import { MessageList } from '@mastra/core/agent/message-list';
import { Memory } from '@mastra/memory';
import { MongoDBStore } from '@mastra/mongodb';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const dated = (record) => ({
  ...record,
  ...(record.createdAt ? { createdAt: new Date(record.createdAt) } : {}),
  ...(record.updatedAt ? { updatedAt: new Date(record.updatedAt) } : {}),
});

const describe = (error) => ({
  name: error?.name,
  message: String(error?.message ?? error),
  code: error?.code ?? error?.id,
  cause: error?.cause ? String(error.cause?.message ?? error.cause) : undefined,
});

const request = await readStdin();
const store = new MongoDBStore({ id: 'interop', url: request.url, dbName: request.dbName });
try {
  await store.init();
  const memory = await store.getStore('memory');
  const write = request.write ?? {};
  for (const thread of write.threads ?? []) await memory.saveThread({ thread: dated(thread) });
  if ((write.messages ?? []).length) await memory.saveMessages({ messages: write.messages.map(dated) });
  for (const resource of write.resources ?? []) await memory.saveResource({ resource: dated(resource) });

  const read = request.read ?? {};
  const answer = { threads: {}, messages: {}, resources: {}, workingMemory: {} };
  for (const resourceId of read.threads ?? []) {
    answer.threads[resourceId] = (await memory.listThreads({ filter: { resourceId }, perPage: false })).threads;
  }
  for (const threadId of read.messages ?? []) {
    const rows = (await memory.listMessages({ threadId, perPage: false })).messages;
    // What an agent does with recalled rows: a MessageList of source "memory", turned into the prompt.
    const list = new MessageList({ threadId });
    list.add(rows, 'memory');
    answer.messages[threadId] = { rows, prompt: await list.get.all.aiV5.llmPrompt() };
  }
  for (const resourceId of read.resources ?? []) {
    answer.resources[resourceId] = (await memory.getResourceById({ resourceId })) ?? null;
  }
  if ((read.workingMemory ?? []).length) {
    const mastra = new Memory({ storage: store, options: { workingMemory: { enabled: true, scope: 'resource' } } });
    for (const { threadId, resourceId } of read.workingMemory) {
      answer.workingMemory[resourceId] = (await mastra.getWorkingMemory({ threadId, resourceId })) ?? null;
    }
  }
  process.stdout.write(JSON.stringify(answer));
} catch (error) {
  process.stdout.write(JSON.stringify({ error: describe(error) }));
  process.exitCode = 3;
} finally {
  await store.close?.().catch(() => {});
}
