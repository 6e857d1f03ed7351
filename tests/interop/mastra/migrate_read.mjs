// Mastra reading a LibSQL file that `mastra-memory migrate` wrote, for tests/interop/test_migrate_libsql.py
// (issue 25, item 4): @mastra/libsql's LibSQLStore and @mastra/memory's Memory, read-only, as an app would.
//
// stdin: {"file": path, "resources": [resourceId], "threads": [{"threadId", "resourceId"}]}
// stdout: {"threads": {resourceId: [threads]}, "resources": {resourceId: resource | null},
//          "messages": {threadId: {"rows": [messages], "prompt": [the AI SDK v5 prompt an agent builds]}},
//          "workingMemory": {resourceId: text | null}}
import { MessageList } from '@mastra/core/agent/message-list';
import { LibSQLStore } from '@mastra/libsql';
import { Memory } from '@mastra/memory';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const store = new LibSQLStore({ id: 'migrated', url: `file:${request.file}` });
await store.init();
const memory = await store.getStore('memory');
const mastra = new Memory({ storage: store, options: { workingMemory: { enabled: true, scope: 'resource' } } });
const answer = { threads: {}, resources: {}, messages: {}, workingMemory: {} };
for (const resourceId of request.resources) {
  answer.threads[resourceId] = (await memory.listThreads({ filter: { resourceId }, perPage: false })).threads;
  answer.resources[resourceId] = (await memory.getResourceById({ resourceId })) ?? null;
}
for (const { threadId, resourceId } of request.threads) {
  const rows = (await memory.listMessages({ threadId, perPage: false })).messages;
  const list = new MessageList({ threadId });
  list.add(rows, 'memory');
  answer.messages[threadId] = { rows, prompt: await list.get.all.aiV5.llmPrompt() };
  answer.workingMemory[resourceId] = (await mastra.getWorkingMemory({ threadId, resourceId })) ?? null;
}
await store.close?.();
process.stdout.write(JSON.stringify(answer));
