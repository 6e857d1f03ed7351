// Mastra's answer to Mastra-style memory options for tests/interop/test_mastra_config_options.py (issue 26):
// whether `new Memory({options})` accepts them, and under them the tools `listTools` offers and whether the
// working-memory system message is the read-only one. One process per test module, one in-memory LibSQL store
// per case.
//
// stdin: {"cases": [{"name", "options": Mastra memory options, "workingMemory": text stored first or null}]}
// stdout: {name: {"loaded": bool, "error": message | null, "tools": [names], "readOnly": bool | null,
//                 "holdsData": bool | null}}
import { LibSQLStore } from '@mastra/libsql';
import { Memory } from '@mastra/memory';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function run(item, index) {
  const store = new LibSQLStore({ id: `cfg-${index}`, url: ':memory:' });
  await store.init();
  let memory;
  try {
    memory = new Memory({ storage: store, options: item.options });
  } catch (error) {
    return { loaded: false, error: String(error?.message ?? error), tools: [], readOnly: null, holdsData: null };
  }
  const threadId = 't1';
  const resourceId = 'r1';
  await memory.saveThread({
    thread: { id: threadId, resourceId, title: 'x', metadata: {}, createdAt: new Date(), updatedAt: new Date() },
  });
  if (item.workingMemory) await memory.updateWorkingMemory({ threadId, resourceId, workingMemory: item.workingMemory });
  const tools = Object.keys(await memory.listTools()).sort();
  const system = await memory.getSystemMessage({ threadId, resourceId });
  return {
    loaded: true,
    error: null,
    tools,
    readOnly: system == null ? null : /read-only/.test(system),
    holdsData: system == null || !item.workingMemory ? null : system.includes(item.workingMemory),
  };
}

const request = await readStdin();
const out = {};
for (const [index, item] of request.cases.entries()) out[item.name] = await run(item, index);
process.stdout.write(JSON.stringify(out));
