// Mastra's own answer for tests/interop/test_mastra_messages.py (issue 25): one process per test module.
//
// stdin: {"save": [{"name", "threadId", "resourceId", "messages": [...]}],
//         "read": [{"name", "threadId", "resourceId", "rows": [stored MastraDBMessage rows]}]}
// stdout: {"save": {name: {"rows": [rows as Mastra's Memory.saveMessages stores them],
//                           "prompt": [the prompt Mastra builds from those rows]}},
//          "read": {name: {"prompt": [the AI SDK v5 prompt Mastra's agent builds from the rows]}
//                   or {"error": "what Mastra threw"}}}
//
// Saving is what @mastra/memory's saveMessages does before it hands rows to the storage: the messages
// added to a MessageList as "memory" and taken out in the stored (db) form. Reading is what an agent does
// with recalled rows: the same MessageList, turned into the prompt for the model.
import { MessageList } from '@mastra/core/agent/message-list';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function stored(message) {
  // What a storage writes: createdAt as ISO text (the row's column), the rest as it is.
  return { ...message, createdAt: new Date(message.createdAt).toISOString() };
}

async function prompt(item, rows) {
  // Rows as a Mastra storage returns them (createdAt a Date, content parsed JSON), recalled into the
  // agent's MessageList and turned into the model's prompt.
  const list = new MessageList({ threadId: item.threadId, resourceId: item.resourceId });
  list.add(rows.map((row) => ({ ...row, createdAt: new Date(row.createdAt) })), 'memory');
  return await list.get.all.aiV5.llmPrompt();
}

const request = await readStdin();
const answer = { save: {}, read: {} };
for (const item of request.save ?? []) {
  const list = new MessageList({ threadId: item.threadId, resourceId: item.resourceId });
  // A stored (format 2) message given as input carries its createdAt as text; Mastra wants a Date.
  const messages = item.messages.map((m) => (m.createdAt ? { ...m, createdAt: new Date(m.createdAt) } : m));
  const rows = list.add(messages, 'memory').get.all.db().map(stored);
  answer.save[item.name] = { rows, prompt: await prompt(item, rows) };
}
for (const item of request.read ?? []) {
  try {
    answer.read[item.name] = { prompt: await prompt(item, item.rows) };
  } catch (error) {
    answer.read[item.name] = { error: String(error?.message ?? error) };
  }
}
process.stdout.write(JSON.stringify(answer));
