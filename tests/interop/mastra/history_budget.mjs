// Mastra's own agent turns for tests/interop/test_mastra_history_budget.py (issue 26, section 2): its
// MemoryInputFilter, MessageHistory and memory-token-limiter over @mastra/libsql, turn by turn, as an agent
// runs its memory's processors.
//
// stdin: {"cases": [{"name", "options": Memory options, "costs": {messageId: tokens},
//                    "turns": [{"input": [messages], "reply": message | null}]}]}
// stdout: {name: {"turns": [{"prompt": [ids the model received], "boundary": thread metadata's
//                            memoryTokenLimiter or null}],
//                 "stored": [{"id", "role", "createdAt", "text", "tools": [tool-invocation states]} of the thread,
//                            oldest first]}}
// Token counts come from "costs" (the Python side's count of each message): Memory's token counter is
// replaced, so the comparison is of the budget's rules, not of two tokenizers (docs/spec.md §5.12 [Δ]).
import { MessageList } from '@mastra/core/agent/message-list';
import { RequestContext } from '@mastra/core/request-context';
import { LibSQLStore } from '@mastra/libsql';
import { Memory } from '@mastra/memory';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const dated = (m) => (m.createdAt ? { ...m, createdAt: new Date(m.createdAt) } : m);
const abort = (reason) => {
  throw new Error(reason);
};

function summary(message) {
  const parts = message.content?.parts ?? [];
  return {
    id: message.id,
    role: message.role,
    createdAt: new Date(message.createdAt).toISOString(),
    text: parts.filter((p) => p.type === 'text').map((p) => p.text).join(' '),
    tools: parts.filter((p) => p.type === 'tool-invocation').map((p) => p.toolInvocation.state),
  };
}

async function runCase(item) {
  const store = new LibSQLStore({ id: `interop-${item.name}`, url: ':memory:' });
  await store.init();
  const costs = item.costs;
  class Counted extends Memory {
    createMemoryTokenCounter() {
      return {
        countMessage(message) {
          if (!(message.id in costs)) throw new Error(`no cost for ${message.id}`);
          return costs[message.id];
        },
      };
    }
  }
  const memory = new Counted({ storage: store, options: item.options });
  const memoryStore = await store.getStore('memory');
  await memoryStore.saveThread({
    thread: { id: 't', resourceId: 'r', title: '', metadata: {}, createdAt: new Date(), updatedAt: new Date() },
  });
  const turns = [];
  for (const turn of item.turns) {
    // As an agent does: the stored thread in the request context.
    const thread = await memoryStore.getThreadById({ threadId: 't' });
    const requestContext = new RequestContext();
    requestContext.set('MastraMemory', { thread, resourceId: 'r' });
    const messageList = new MessageList({ threadId: 't', resourceId: 'r' });
    messageList.add(turn.input.map(dated), 'input');
    for (const processor of await memory.getInputProcessors([], requestContext)) {
      if (!processor.processInput) continue;
      await processor.processInput({
        messages: messageList.get.all.db(),
        messageList,
        systemMessages: messageList.getAllSystemMessages(),
        abort,
        requestContext,
        state: {},
        retryCount: 0,
      });
    }
    const prompt = messageList.get.all.db().map((m) => m.id);
    const replies = turn.reply ? [dated(turn.reply)] : [];
    if (replies.length) messageList.add(replies, 'response');
    for (const processor of await memory.getOutputProcessors([], requestContext)) {
      if (!processor.processOutputResult) continue;
      await processor.processOutputResult({
        messages: messageList.get.response.db(),
        messageList,
        abort,
        requestContext,
        state: {},
        retryCount: 0,
      });
    }
    const after = await memoryStore.getThreadById({ threadId: 't' });
    turns.push({ prompt, boundary: after?.metadata?.memoryTokenLimiter ?? null });
  }
  const rows = (await memoryStore.listMessages({ threadId: 't', perPage: false })).messages;
  await store.close?.();
  return { turns, stored: rows.map(summary) };
}

const request = await readStdin();
const answer = {};
for (const item of request.cases) answer[item.name] = await runCase(item);
process.stdout.write(JSON.stringify(answer));
