// Mastra's own title generation for tests/interop/test_mastra_titles.py (issue 27): one process per module.
//
// stdin: {"url": the chat-completions server both sides call,
//         "cases": [{"name", "threadId", "resourceId", "generateTitle": Mastra's option (its "model" the
//                    {id, url} config), "thread"?: {"title", "metadata"} created first,
//                    "turns": ["user text", ...]}]}
// stdout: {name: {"titles": [the thread's title after each turn], "metadata": the thread's metadata}}
//
// Each case runs an Agent (its own model on the same server) with a Memory over an in-memory LibSQL store;
// after each turn the script waits (bounded) for the title Mastra generates in the background.
import { Agent } from '@mastra/core/agent';
import { Memory } from '@mastra/memory';
import { LibSQLStore } from '@mastra/libsql';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const request = await readStdin();
const answer = {};
for (const [index, item] of request.cases.entries()) {
  const storage = new LibSQLStore({ id: `titles-${index}`, url: ':memory:' });
  const memory = new Memory({ storage, options: { lastMessages: 10, generateTitle: item.generateTitle } });
  const agent = new Agent({
    id: `agent-${index}`,
    name: `agent-${index}`,
    instructions: 'AGENT',
    model: { id: 'local/agent-model', url: request.url, apiKey: 'test' },
    memory,
  });
  if (item.thread) {
    await memory.createThread({
      threadId: item.threadId,
      resourceId: item.resourceId,
      title: item.thread.title,
      metadata: item.thread.metadata,
    });
  }
  const titles = [];
  for (const text of item.turns) {
    await agent.generate(text, { memory: { thread: item.threadId, resource: item.resourceId } });
    // The title is made after the turn, detached from it: wait for it (at most 5 s, less when pinned).
    let thread;
    for (let waited = 0; waited < 5000; waited += 50) {
      thread = await memory.getThreadById({ threadId: item.threadId });
      if (thread?.title && thread.title !== item.thread?.title) break;
      if (item.settleMs !== undefined && waited >= item.settleMs) break;
      await sleep(50);
    }
    titles.push(thread?.title ?? null);
  }
  const thread = await memory.getThreadById({ threadId: item.threadId });
  answer[item.name] = { titles, metadata: thread?.metadata ?? null };
}
process.stdout.write(JSON.stringify(answer));
