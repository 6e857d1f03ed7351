// Mastra's own vector stores for tests/interop/test_mastra_vector_api.py (issue 26, section 2): what
// @mastra/pg's PgVector and @mastra/libsql's LibSQLVector answer to a query without a query vector and to an
// upsert with deleteFilter.
//
// stdin: {"pg": {"url", "schema", "index"} | null, "libsql": {"url", "index"} | null, "dimension": n,
//         "records": [{"id", "vector", "metadata"}], "listFilter": filter, "listTopK": n,
//         "replace": {"records": [...], "deleteFilter": filter}, "queryVector": [..]}
// stdout: {"pg": {...}, "libsql": {...}}: for each store, "listed" (the filter-only query with listFilter and
//         listTopK), "listedAll" (the same with topK 100), "withoutFilter" and "emptyFilter" (a query with no
//         vector and no / an empty filter), "afterReplace" and "afterEmptyReplace" (every row of the index table
//         after an upsert with replace.deleteFilter, then with deleteFilter {}). Each is {"hits": [{id, score, metadata}]}
//         or {"error": message}.
import { LibSQLVector } from '@mastra/libsql';
import { PgVector } from '@mastra/pg';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function attempt(fn) {
  try {
    const hits = await fn();
    return { hits: hits.map(({ id, score, metadata }) => ({ id, score, metadata })) };
  } catch (error) {
    // MastraError wraps the reason: its cause holds the store's own message.
    return { error: `${error.message} ${error.cause?.message ?? ''}`.trim() };
  }
}

const upsertAll = (store, indexName, records, extra = {}) =>
  store.upsert({
    indexName,
    vectors: records.map((r) => r.vector),
    metadata: records.map((r) => r.metadata),
    ids: records.map((r) => r.id),
    ...extra,
  });

// Every record a store holds, read from its own table: Mastra's vector queries are approximate (LibSQL's
// vector_top_k, pg's ivfflat) and may miss rows (docs/spec.md §4.7 [Δ]), while these checks are about what
// an upsert with deleteFilter leaves stored.
const rowsOf = (rows) =>
  rows.map((row) => ({
    id: row.id,
    score: 0,
    metadata: typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata,
  }));

const storedIn = {
  pg: (store, indexName) => async () => {
    const { tableName } = store.getTableName(indexName);
    const result = await store.pool.query(`SELECT vector_id AS id, metadata FROM ${tableName} ORDER BY vector_id`);
    return rowsOf(result.rows);
  },
  libsql: (store, indexName) => async () => {
    const result = await store.turso.execute(`SELECT vector_id AS id, metadata FROM ${indexName} ORDER BY vector_id`);
    return rowsOf(result.rows);
  },
};

async function scenario(store, indexName, request, kind) {
  await store.createIndex({ indexName, dimension: request.dimension });
  await upsertAll(store, indexName, request.records);
  const everything = storedIn[kind](store, indexName);
  const answer = {};
  answer.listed = await attempt(() => store.query({ indexName, filter: request.listFilter, topK: request.listTopK }));
  answer.listedAll = await attempt(() => store.query({ indexName, filter: request.listFilter, topK: 100 }));
  answer.withoutFilter = await attempt(() => store.query({ indexName, topK: 100 }));
  answer.emptyFilter = await attempt(() => store.query({ indexName, filter: {}, topK: 100 }));
  answer.replaceCall = await attempt(async () => {
    await upsertAll(store, indexName, request.replace.records, { deleteFilter: request.replace.deleteFilter });
    return [];
  });
  answer.afterReplace = await attempt(everything);
  answer.emptyReplaceCall = await attempt(async () => {
    await upsertAll(store, indexName, request.emptyReplace.records, { deleteFilter: {} });
    return [];
  });
  answer.afterEmptyReplace = await attempt(everything);
  await store.deleteIndex({ indexName });
  return answer;
}

const request = await readStdin();
const answer = {};
if (request.pg) {
  const store = new PgVector({ id: 'interop', connectionString: request.pg.url, schemaName: request.pg.schema });
  try {
    answer.pg = await scenario(store, request.pg.index, request, 'pg');
  } finally {
    await store.disconnect?.();
  }
}
if (request.libsql) {
  const store = new LibSQLVector({ id: 'interop', url: request.libsql.url });
  answer.libsql = await scenario(store, request.libsql.index, request, 'libsql');
}
process.stdout.write(JSON.stringify(answer));
