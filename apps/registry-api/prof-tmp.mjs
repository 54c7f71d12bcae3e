import { createDb } from '@pkgreg/db';
import { searchPrivate } from './dist/search/private-search.repository.js';
import { searchLexemes } from './dist/search/search-terms.js';

const db = createDb('postgres://postgres@127.0.0.1:5432/pkgreg_bench', { max: 1 });
const scopes =
  'org-audit,org-backup,org-benchmark,org-citation,org-compliance,org-crypto,org-dataset,org-design,org-diagram,org-download'.split(
    ',',
  );
// Capture the statement: wrap executeQuery
const orig = db.getExecutor().executeQuery.bind(db.getExecutor());
let captured;
const exec = db.getExecutor();
const proto = Object.getPrototypeOf(exec);
const origExec = proto.executeQuery;
proto.executeQuery = async function (compiled, qid) {
  captured = compiled;
  return origExec.call(this, compiled, qid);
};
await searchPrivate(db, { scopes, packages: [] }, searchLexemes(process.argv[2]), {}, 50);
const { sql } = await import('kysely');
const res = await sql
  .raw(
    'explain (analyze, buffers) ' +
      captured.sql.replace(/\$(\d+)/g, (_, n) => {
        const v = captured.parameters[n - 1];
        return Array.isArray(v)
          ? `'{${v.map((x) => '"' + x + '"').join(',')}}'`
          : typeof v === 'number'
            ? String(v)
            : `'${String(v).replaceAll("'", "''")}'`;
      }),
  )
  .execute(db);
console.log(res.rows.map((r) => r['QUERY PLAN']).join('\n'));
await db.destroy();
