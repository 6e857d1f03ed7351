// Mastra's own updateWorkingMemory tool and updateThread for tests/interop/test_mastra_working_memory.py
// (issue 26, section 3): one process per test module, one in-memory LibSQL store per case.
//
// stdin: {"cases": [{"name", "options": Mastra memory options (workingMemory: {enabled, scope, template} or
//          {schema: a JSON schema}), "threads": [StorageThreadType to store first],
//          "resources": [{"id", "workingMemory"}], "calls": [{"tool": {"memory": ...}, "threadId", "resourceId"}
//          | {"updateThread": {"id", "title", "metadata"}}]}]}
// stdout: {name: {"results": [what each call returned, or {"error": message}],
//                 "thread": the first call's thread after the calls (or null),
//                 "workingMemory": {"resource": text | null, "thread": text | null}}}
import { LibSQLStore } from '@mastra/libsql';
import { Memory } from '@mastra/memory';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function run(item, index) {
  const store = new LibSQLStore({ id: `wm-${index}`, url: ':memory:' });
  await store.init();
  const memory = new Memory({ storage: store, options: item.options });
  for (const thread of item.threads ?? []) {
    await memory.saveThread({ thread: { createdAt: new Date(), updatedAt: new Date(), ...thread } });
  }
  const stored = await store.getStore('memory');
  for (const resource of item.resources ?? []) {
    await stored.saveResource({
      resource: { ...resource, metadata: {}, createdAt: new Date(), updatedAt: new Date() },
    });
  }
  const tools = await memory.listTools();
  const tool = tools.updateWorkingMemory;
  const results = [];
  let threadId;
  let resourceId;
  for (const call of item.calls) {
    try {
      if (call.updateThread) {
        const thread = await memory.updateThread(call.updateThread);
        threadId ??= thread.id;
        resourceId ??= thread.resourceId;
        results.push({ thread: { id: thread.id, metadata: thread.metadata } });
        continue;
      }
      threadId ??= call.threadId;
      resourceId ??= call.resourceId;
      const context = { agent: { threadId: call.threadId, resourceId: call.resourceId }, memory };
      results.push((await tool.execute(call.tool, context)) ?? null);
    } catch (error) {
      results.push({ error: String(error?.message ?? error) });
    }
  }
  const thread = threadId ? await memory.getThreadById({ threadId }) : null;
  const resource = resourceId ? await stored.getResourceById({ resourceId }) : null;
  return {
    results,
    thread: thread ? { id: thread.id, resourceId: thread.resourceId, title: thread.title, metadata: thread.metadata } : null,
    workingMemory: {
      resource: resource?.workingMemory ?? null,
      thread: thread?.metadata?.workingMemory ?? null,
    },
  };
}

const request = await readStdin();
const answer = {};
let index = 0;
for (const item of request.cases ?? []) {
  try {
    answer[item.name] = await run(item, index++);
  } catch (error) {
    answer[item.name] = { error: String(error?.stack ?? error) };
  }
}
process.stdout.write(JSON.stringify(answer));
