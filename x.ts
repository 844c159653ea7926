import { PGlite } from '@electric-sql/pglite';
const db = new PGlite('/tmp/kd');
console.log((await db.query(`SELECT * FROM schema_migrations`)).rows);
console.log((await db.query(`SELECT count(*) FROM actor_events`)).rows);
console.log((await db.query(`SELECT tablename FROM pg_tables WHERE schemaname='public'`)).rows);
await db.close();
