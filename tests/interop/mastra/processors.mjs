// Mastra's own TokenLimiter and ToolCallFilter for tests/interop/test_mastra_processors.py (issue 26):
// one process per test module.
//
// stdin: {"cases": [{"name", "processor": "token-limiter" | "tool-call-filter", "options": {...},
//                    "memory": [stored MastraDBMessage rows], "input": [stored rows of this turn],
//                    "counts": {id: tokens} (memory-only: Mastra's tokenCounter.countMessage)}]}
// stdout: {name: {"kept": [what the model receives, in order: "text:<t>", "call:<id>", "result:<id>"]}
//                 (memory-only: {"ids": [the ids left in the MessageList]}) or {"error": "..."}}
//
// best-fit/contiguous and the filter run where Mastra runs them (processLLMRequest, on the prompt built
// from the MessageList); memory-only runs at processInput, on the MessageList itself.
import { MessageList } from '@mastra/core/agent/message-list';
import { TokenLimiterProcessor, ToolCallFilter } from '@mastra/core/processors';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const dated = (rows) => rows.map((row) => ({ ...row, createdAt: new Date(row.createdAt) }));

function flatten(prompt) {
  const kept = [];
  for (const message of prompt) {
    if (message.role === 'system') continue;
    const parts = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    for (const part of parts) {
      if (part.type === 'text') kept.push(`text:${part.text}`);
      else if (part.type === 'tool-call') kept.push(`call:${part.toolCallId}`);
      else if (part.type === 'tool-result') kept.push(`result:${part.toolCallId}`);
    }
  }
  return kept;
}

async function run(item) {
  const list = new MessageList({ threadId: 't', resourceId: 'r' });
  list.add(dated(item.memory ?? []), 'memory');
  list.add(dated(item.input ?? []), 'input');
  if (item.processor === 'token-limiter' && item.options.trimMode === 'memory-only') {
    const counts = item.counts ?? {};
    const limiter = new TokenLimiterProcessor({
      ...item.options,
      tokenCounter: { countMessage: (message) => counts[message.id] },
    });
    await limiter.processInput({ messageList: list, messages: list.get.all.db(), abort: () => {} });
    return { ids: list.get.all.db().map((m) => m.id) };
  }
  const prompt = await list.get.all.aiV5.llmPrompt();
  const processor =
    item.processor === 'token-limiter' ? new TokenLimiterProcessor(item.options) : new ToolCallFilter(item.options);
  const result = await processor.processLLMRequest({ prompt, state: {} });
  return { kept: flatten(result?.prompt ?? prompt) };
}

const request = await readStdin();
const answer = {};
for (const item of request.cases ?? []) {
  try {
    answer[item.name] = await run(item);
  } catch (error) {
    answer[item.name] = { error: String(error?.message ?? error) };
  }
}
process.stdout.write(JSON.stringify(answer));
