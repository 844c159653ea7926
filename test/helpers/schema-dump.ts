/**
 * Two ways to write down a database schema as a map from object to definition, so that two
 * schemas can be compared object by object: `pg_dump --schema-only` (PostgreSQL), and a dump
 * of the catalog (PGlite has no pg_dump binary; it serves PostgreSQL too). Both name objects
 * the way pg_dump's headers do (`CONSTRAINT outbox outbox_pkey`, `FUNCTION f(p text)`), so one
 * list of expected differences serves both.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Queryable } from '../../storage/db.ts';

export type SchemaDump = Map<string, string>;
export type Delta = Record<string, 'added' | 'removed' | 'changed'>;

/** The tracking table differs by design (the folded chain records checksums). */
const IGNORED = /(^| )schema_migrations( |$|_)/;

function normalise(text: string, schema: string): string {
  return text.split(`${schema}.`).join('').replace(/\s+/g, ' ').trim();
}

function put(dump: SchemaDump, key: string, value: string): void {
  if (IGNORED.test(key)) return;
  if (dump.has(key)) throw new Error(`two objects named ${key}`);
  dump.set(key, value);
}

const TABLES = `
  SELECT c.relname AS name, c.relpersistence AS persistence, coalesce(array_to_string(c.reloptions, ','), '') AS options,
         string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
                    || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), ''), ', ' ORDER BY a.attnum) AS columns
    FROM pg_class c
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
   WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
   GROUP BY c.relname, c.relpersistence, c.reloptions`;

const CONSTRAINTS = `
  SELECT t.relname || ' ' || k.conname AS name, pg_get_constraintdef(k.oid) AS def
    FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid
   WHERE k.connamespace = current_schema()::regnamespace`;

// Indexes that back a constraint are dumped as that constraint.
const INDEXES = `
  SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
   WHERE i.relnamespace = current_schema()::regnamespace
     AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid)`;

const FUNCTIONS = `
  SELECT p.proname || '(' || oidvectortypes(p.proargtypes) || ')' AS name, pg_get_functiondef(p.oid) AS def
    FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace`;

const TRIGGERS = `
  SELECT c.relname || ' ' || g.tgname AS name, pg_get_triggerdef(g.oid) AS def
    FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
   WHERE c.relnamespace = current_schema()::regnamespace AND NOT g.tgisinternal`;

const SEQUENCES = `
  SELECT c.relname AS name, format_type(s.seqtypid, NULL) || ' owned by ' || coalesce(o.relname || '.' || a.attname, '-') AS def
    FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
    LEFT JOIN pg_depend d ON d.objid = c.oid AND d.deptype = 'a'
    LEFT JOIN pg_class o ON o.oid = d.refobjid
    LEFT JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
   WHERE c.relnamespace = current_schema()::regnamespace`;

/** Tables (columns, types, defaults, storage options), constraints, indexes, functions, triggers, sequences. */
export async function catalogDump(q: Queryable): Promise<SchemaDump> {
  const schema = (await q.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]!.s;
  const dump: SchemaDump = new Map();
  const tables = await q.query<{ name: string; persistence: string; options: string; columns: string }>(TABLES);
  for (const t of tables.rows) put(dump, `TABLE ${t.name}`, normalise(`${t.persistence === 'u' ? 'UNLOGGED ' : ''}(${t.columns}) WITH (${t.options})`, schema));
  for (const [kind, sql] of [['CONSTRAINT', CONSTRAINTS], ['INDEX', INDEXES], ['FUNCTION', FUNCTIONS], ['TRIGGER', TRIGGERS], ['SEQUENCE', SEQUENCES]] as const) {
    const { rows } = await q.query<{ name: string; def: string }>(sql);
    for (const r of rows) put(dump, `${kind} ${r.name}`, normalise(r.def, schema));
  }
  return dump;
}

/** `pg_dump --schema-only` of one schema, cut at its object headers. */
export async function pgDump(databaseUrl: string, schema: string): Promise<SchemaDump> {
  const { stdout } = await promisify(execFile)('pg_dump', ['--schema-only', '--no-owner', '--no-privileges', `--schema=${schema}`, `--dbname=${databaseUrl}`], {
    maxBuffer: 64 << 20,
  });
  const dump: SchemaDump = new Map();
  const parts = stdout.split(/^--\n-- Name: (.*?); Type: (.*?); Schema: .*\n--\n/m);
  for (let i = 1; i + 2 < parts.length; i += 3) {
    const [name, type, body] = [parts[i]!, parts[i + 1]!, parts[i + 2]!];
    if (type === 'SCHEMA') continue;
    // Session settings and comments at the left margin belong to the dump, not to the object
    // (comments inside function bodies are indented).
    const own = body.split('\n').filter((l) => !/^(--|\\|SET |SELECT pg_catalog\.set_config)/.test(l));
    put(dump, `${type} ${name}`, normalise(own.join('\n'), schema));
  }
  return dump;
}

/** What `to` adds, removes or changes compared with `from`. */
export function schemaDelta(from: SchemaDump, to: SchemaDump): Delta {
  const delta: Delta = {};
  for (const [k, v] of from) {
    const w = to.get(k);
    if (w === undefined) delta[k] = 'removed';
    else if (w !== v) delta[k] = 'changed';
  }
  for (const k of to.keys()) if (!from.has(k)) delta[k] = 'added';
  return delta;
}
