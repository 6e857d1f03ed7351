// Mastra's own Memory with LibSQLVector for tests/interop/test_libsql_vector.py (issue 25, item 2's vector
// half): semantic recall over one LibSQL file, with an embedder both sides share (the vectors are given).
//
// stdin: {"file": path, "vectors": {text: [number]}, "options": MemoryConfig options (camelCase),
//         "threads": [StorageThreadType], "messages": [MastraDBMessage],
//         "recall": [{"threadId", "resourceId", "query", "threadConfig"}],
//         "queries": [{"indexName", "vector": [number], "topK", "filter"}]}
// stdout: {"recall": [[message ids, in the order recall returns them]],
//          "queries": [[{"id", "score", "metadata"}]], "indexes": [names]}
// The embedder looks texts up in "vectors" (a text it does not know is an error): the vectors are the
// Python side's hash embedder's, so both sides embed every text identically. Writes run before reads.
import { LibSQLStore, LibSQLVector } from '@mastra/libsql';
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
const url = `file:${request.file}`;
const storage = new LibSQLStore({ id: 'interop-storage', url });
const vector = new LibSQLVector({ id: 'interop-vector', url });
const memory = new Memory({ storage, vector, embedder, options: request.options });

for (const thread of request.threads ?? []) await memory.saveThread({ thread: dated(thread) });
if ((request.messages ?? []).length) await memory.saveMessages({ messages: request.messages.map(dated) });

const answer = { recall: [], queries: [], indexes: [] };
for (const { threadId, resourceId, query, threadConfig } of request.recall ?? []) {
  const { messages } = await memory.recall({ threadId, resourceId, vectorSearchString: query, threadConfig });
  answer.recall.push(messages.map((m) => m.id));
}
for (const { indexName, vector: queryVector, topK, filter } of request.queries ?? []) {
  const hits = await vector.query({ indexName, queryVector, topK, filter });
  answer.queries.push(hits.map(({ id, score, metadata }) => ({ id, score, metadata })));
}
answer.indexes = await vector.listIndexes();
await vector.close?.();
await storage.close?.();
process.stdout.write(JSON.stringify(answer));
