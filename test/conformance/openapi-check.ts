/**
 * Validates recorded responses against the served OpenAPI 3.1 document: the status must be
 * documented for the operation and the JSON body must match its schema (JSON Schema 2020-12,
 * ajv). A path the document does not describe (404/405 on unknown routes) must still be the
 * error envelope.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext types.
const addFormats = formats as unknown as (ajv: Ajv2020) => Ajv2020;

export interface Seen {
  method: string;
  path: string;
  status: number;
  body: unknown;
  headers: IncomingHttpHeaders;
}

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>> };

function pointer(...parts: string[]): string {
  return parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
}

/** Every component schema and every response schema of the document compiles as JSON Schema 2020-12. */
export function compileDocument(doc: Record<string, unknown>): number {
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi' });
  const d = doc as unknown as Doc & { components: { schemas: Record<string, unknown> } };
  let n = 0;
  for (const id of Object.keys(d.components.schemas)) {
    ajv.compile({ $ref: `openapi#/components/schemas/${id}` });
    n++;
  }
  for (const [tpl, ops] of Object.entries(d.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, resp] of Object.entries(op.responses)) {
        if (!resp.content?.['application/json']) continue;
        ajv.compile({ $ref: `openapi#/${pointer('paths', tpl, method, 'responses', status, 'content', 'application/json', 'schema')}` });
        n++;
      }
    }
  }
  return n;
}

export function checkAgainstOpenApi(doc: Record<string, unknown>, seen: readonly Seen[]): string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi' });
  const d = doc as unknown as Doc;
  const templates = Object.keys(d.paths).map((t) => ({ t, re: new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));
  const cache = new Map<string, ValidateFunction>();
  const validator = (ref: string): ValidateFunction => {
    const hit = cache.get(ref);
    if (hit) return hit;
    const v = ajv.compile({ $ref: ref });
    cache.set(ref, v);
    return v;
  };
  const problems: string[] = [];
  for (const s of seen) {
    const what = `${s.method} ${s.path} -> ${s.status}`;
    const method = s.method.toLowerCase();
    const tpl = templates.find(({ re }) => re.test(s.path))?.t;
    const op = tpl ? d.paths[tpl]?.[method] : undefined;
    let ref: string;
    if (!op) {
      if (s.status !== 404 && s.status !== 405) {
        problems.push(`${what}: no operation in the document`);
        continue;
      }
      ref = 'openapi#/components/schemas/Error';
    } else {
      const status = String(s.status);
      const resp = op.responses[status] ?? op.responses.default;
      if (!resp) {
        problems.push(`${what}: status not documented (documented: ${Object.keys(op.responses).join(', ')})`);
        continue;
      }
      if (!resp.content?.['application/json']) {
        // HTML, event stream, script: the media type must be one the document names.
        const types = Object.keys(resp.content ?? {});
        const got = String(s.headers['content-type'] ?? '');
        if (types.length > 0 && !types.some((t) => got.startsWith(t))) problems.push(`${what}: content-type ${got}, documented ${types.join(', ')}`);
        continue;
      }
      ref = `openapi#/${pointer('paths', tpl!, method, 'responses', op.responses[status] ? status : 'default', 'content', 'application/json', 'schema')}`;
    }
    const v = validator(ref);
    if (!v(s.body)) problems.push(`${what}: ${ajv.errorsText(v.errors)} in ${JSON.stringify(s.body).slice(0, 300)}`);
    if (!String(s.headers['content-type'] ?? '').startsWith('application/json')) problems.push(`${what}: content-type ${String(s.headers['content-type'])}`);
  }
  return problems;
}
