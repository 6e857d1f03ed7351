// Mastra's thread helpers for tests/interop/test_mastra_thread_helpers.py (issue 26, section 2): the clone
// lineage helpers, listMessagesByResourceId, retention's prune() and filterIncompleteToolCalls, run by
// @mastra/memory and @mastra/libsql on a LibSQL file, as a Mastra app runs them.
//
// stdin: {"file": path,
//         "threads": [StorageThreadType], "messages": [MastraDBMessage],       (written first)
//         "clones": [{"sourceThreadId", "newThreadId", "resourceId"?, "title"?}], (cloneThread, in order)
//         "lineage": {"isClone": [threadId], "source": [threadId], "clones": [[sourceThreadId, resourceId|null]],
//                     "history": [threadId]},
//         "byResource": [StorageListMessagesByResourceIdInput],
//         "prune": {"retention": RetentionConfig, "calls": [PruneOptions]} | null,  (last: it deletes)
//         "toolCalls": {"messages": [MastraDBMessage], "modes": [bool]} | null}
// stdout: {"clones": [{thread, messageIdMap}], "lineage": {"isClone": {id: bool}, "source": {id: id|null},
//          "clones": [[ids]], "history": {id: [ids]}}, "byResource": [{ids, total, page, perPage, hasMore}],
//          "prune": {"results": [[PruneResult]], "threads": [ids], "messages": [ids]} | null,
//          "toolCalls": {mode: [{role, calls: [toolCallId], results: [{toolCallId, output}]}]} | null}
import { MessageList } from '@mastra/core/agent/message-list';
import { LibSQLStore } from '@mastra/libsql';
import { Memory } from '@mastra/memory';

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
const datedFilter = (filter) =>
  filter?.dateRange
    ? {
        ...filter,
        dateRange: {
          ...filter.dateRange,
          ...(filter.dateRange.start ? { start: new Date(filter.dateRange.start) } : {}),
          ...(filter.dateRange.end ? { end: new Date(filter.dateRange.end) } : {}),
        },
      }
    : filter;

const request = await readStdin();
const store = new LibSQLStore({ id: 'interop', url: `file:${request.file}`, retention: request.prune?.retention });
await store.init();
const storage = await store.getStore('memory');
for (const thread of request.threads ?? []) await storage.saveThread({ thread: dated(thread) });
if ((request.messages ?? []).length) await storage.saveMessages({ messages: request.messages.map(dated) });

const memory = new Memory({ storage: store, options: { lastMessages: 10 } });
const answer = { clones: [], lineage: { isClone: {}, source: {}, clones: [], history: {} }, byResource: [] };
for (const clone of request.clones ?? []) {
  const { thread, messageIdMap } = await memory.cloneThread(clone);
  answer.clones.push({ thread, messageIdMap });
}
const lineage = request.lineage ?? {};
for (const threadId of lineage.isClone ?? []) {
  answer.lineage.isClone[threadId] = memory.isClone(await memory.getThreadById({ threadId }));
}
for (const threadId of lineage.source ?? []) {
  answer.lineage.source[threadId] = (await memory.getSourceThread(threadId))?.id ?? null;
}
for (const [sourceThreadId, resourceId] of lineage.clones ?? []) {
  answer.lineage.clones.push((await memory.listClones(sourceThreadId, resourceId ?? undefined)).map((t) => t.id));
}
for (const threadId of lineage.history ?? []) {
  answer.lineage.history[threadId] = (await memory.getCloneHistory(threadId)).map((t) => t.id);
}
for (const args of request.byResource ?? []) {
  const page = await memory.listMessagesByResourceId({ ...args, filter: datedFilter(args.filter) });
  answer.byResource.push({
    ids: page.messages.map((m) => m.id),
    total: page.total,
    page: page.page,
    perPage: page.perPage,
    hasMore: page.hasMore,
  });
}
if (request.prune) {
  const results = [];
  for (const options of request.prune.calls) results.push(await store.prune(options));
  const threads = (await storage.listThreads({ perPage: false })).threads.map((t) => t.id).sort();
  const messages = (await storage.listMessagesById({ messageIds: request.messages.map((m) => m.id) })).messages
    .map((m) => m.id)
    .sort();
  answer.prune = { results, threads, messages };
}
if (request.toolCalls) {
  answer.toolCalls = {};
  for (const mode of request.toolCalls.modes) {
    const list = new MessageList({ threadId: 'tools', filterIncompleteToolCalls: mode });
    list.add(request.toolCalls.messages.map(dated), 'memory');
    const prompt = await list.get.all.aiV5.llmPrompt();
    answer.toolCalls[String(mode)] = prompt
      .filter((m) => m.role !== 'system')
      .map((m) => {
        const parts = Array.isArray(m.content) ? m.content : [];
        return {
          role: m.role,
          calls: parts.filter((p) => p.type === 'tool-call').map((p) => p.toolCallId),
          results: parts
            .filter((p) => p.type === 'tool-result')
            .map((p) => ({ toolCallId: p.toolCallId, output: p.output })),
        };
      });
  }
}
await store.close?.();
process.stdout.write(JSON.stringify(answer));
