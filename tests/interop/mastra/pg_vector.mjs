// Mastra's own Memory with @mastra/pg's PgVector and PostgresStore for tests/interop/test_pg_vector.py
// (issue 25, item 3's vector half for PostgreSQL): semantic recall over one schema, with an embedder both
// sides share (the vectors are given).
//
// stdin: {"url": connection string, "schema": schema name, "vectors": {text: [number]},
//         "options": MemoryConfig options (camelCase), "threads": [StorageThreadType],
//         "messages": [MastraDBMessage], "recall": [{"threadId", "resourceId", "query", "threadConfig"}],
//         "queries": [{"indexName", "vector": [number], "topK", "filter"}]}
// stdout: {"recall": [[message ids, in the order recall returns them]],
//          "queries": [[{"id", "score", "metadata"}]], "indexes": [names], "describe": {name: stats}}
// The embedder looks texts up in "vectors" (a text it does not know is an error). Writes run before reads.
import { Memory } from '@mastra/memory';
import { PgVector, PostgresStore } from '@mastra/pg';

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

const request = await readStdin();
const embedder = {
  specificationVersion: 'v2',
  provider: 'interop',
  modelId: 'given-vectors',
  maxEmbeddingsPerCall: 2048,
  supportsParallelCalls: true,
  async doEmbed({ values }) {
    return {
      embeddings: values.map((text) => {
        const vector = request.vectors[text];
        if (!vector) throw new Error(`no vector given for text ${JSON.stringify(text)}`);
        return vector;
      }),
    };
  },
};
const storage = new PostgresStore({ id: 'interop-storage', connectionString: request.url, schemaName: request.schema });
const vector = new PgVector({ id: 'interop-vector', connectionString: request.url, schemaName: request.schema });
try {
  const memory = new Memory({ storage, vector, embedder, options: request.options });
  for (const thread of request.threads ?? []) await memory.saveThread({ thread: dated(thread) });
  if ((request.messages ?? []).length) await memory.saveMessages({ messages: request.messages.map(dated) });

  const answer = { recall: [], queries: [], indexes: [], describe: {} };
  for (const { threadId, resourceId, query, threadConfig } of request.recall ?? []) {
    const { messages } = await memory.recall({ threadId, resourceId, vectorSearchString: query, threadConfig });
    answer.recall.push(messages.map((m) => m.id));
  }
  for (const { indexName, vector: queryVector, topK, filter } of request.queries ?? []) {
    const hits = await vector.query({ indexName, queryVector, topK, filter });
    answer.queries.push(hits.map(({ id, score, metadata }) => ({ id, score, metadata })));
  }
  answer.indexes = await vector.listIndexes();
  for (const indexName of answer.indexes) answer.describe[indexName] = await vector.describeIndex({ indexName });
  process.stdout.write(JSON.stringify(answer));
} finally {
  await vector.disconnect?.();
  await storage.close?.();
}
