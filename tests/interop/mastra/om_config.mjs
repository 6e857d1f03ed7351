// Mastra's answer to observationalMemory configurations for tests/interop/test_mastra_om_config.py (issue 27):
// OBSERVATIONAL_MEMORY_DEFAULTS, and per case whether `new Memory({options})` with its OM engine accepts the
// options and, when it does, the thresholds, scope and retrieval settings the engine resolved. No model is
// called: the engine is only built. One process per test module, one in-memory LibSQL store per case.
//
// stdin: {"cases": [{"name", "options": Mastra memory options}]}
// stdout: {"defaults": OBSERVATIONAL_MEMORY_DEFAULTS, "cases": {name: {"loaded", "error", "enabled",
//          "messageTokens", "observationTokens", "scope", "shareTokenBudget", "bufferTokens", "retrieval",
//          "retrievalScope", "retrievalSearch", "tools"}}}
import { LibSQLStore } from '@mastra/libsql';
import { Memory } from '@mastra/memory';
import { OBSERVATIONAL_MEMORY_DEFAULTS } from '@mastra/memory/processors';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function run(item, index) {
  const store = new LibSQLStore({ id: `om-${index}`, url: ':memory:' });
  await store.init();
  try {
    const memory = new Memory({ storage: store, options: item.options });
    const engine = await memory.omEngine;
    if (!engine) return { loaded: true, error: null, enabled: false };
    const tools = Object.keys(await memory.listTools()).sort();
    return {
      loaded: true,
      error: null,
      enabled: true,
      messageTokens: engine.observationConfig.messageTokens,
      observationTokens: engine.reflectionConfig.observationTokens,
      scope: engine.scope,
      shareTokenBudget: engine.observationConfig.shareTokenBudget,
      bufferTokens: engine.observationConfig.bufferTokens ?? null,
      retrieval: engine.retrieval,
      retrievalScope: engine.retrievalScope,
      retrievalSearch: engine.retrievalSearch,
      tools,
    };
  } catch (error) {
    return { loaded: false, error: String(error?.message ?? error) };
  }
}

const request = await readStdin();
const cases = {};
for (const [index, item] of request.cases.entries()) cases[item.name] = await run(item, index);
process.stdout.write(JSON.stringify({ defaults: OBSERVATIONAL_MEMORY_DEFAULTS, cases }));
