/**
 * The API reference page, written as Markdown from the OpenAPI document the service serves at
 * `/api/v1/openapi.json` (gateway/openapi.ts), so it cannot drift from what the handlers
 * validate: one section per operation (parameters, body, responses with their error codes),
 * then the schemas with their fields.
 */
type Json = Record<string, unknown>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** A string or number from the document; anything else is left out. */
function str(v: unknown): string {
  return typeof v === 'string' || typeof v === 'number' ? String(v) : '';
}

/** Table cells hold no pipes or line breaks. */
function cell(s: unknown): string {
  return str(s)
    .replace(/\|/g, '\\|')
    .replace(/\s*\n\s*/g, ' ');
}

function refName(ref: string): string {
  return ref.split('/').pop() ?? ref;
}

/** A short type description: `string`, `integer`, `PaymentIntent`, `one of a, b`. */
export function typeOf(schema: unknown): string {
  if (!schema || typeof schema !== 'object') return 'any';
  const s = schema as Json;
  if (typeof s.$ref === 'string') return `[${refName(s.$ref)}](#schema-${refName(s.$ref).toLowerCase()})`;
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  const union = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(union)) return union.map(typeOf).join(' or ');
  if (Array.isArray(s.type)) return s.type.join(' or ');
  if (s.type === 'array') return `array of ${typeOf(s.items)}`;
  if (typeof s.type === 'string') return s.format ? `${s.type} (${str(s.format)})` : s.type;
  return 'object';
}

function operation(method: string, route: string, op: Json): string[] {
  const out = [`## ${method.toUpperCase()} ${route}`, ''];
  if (op.summary) out.push(str(op.summary), '');
  if (op.description) out.push(str(op.description), '');
  const params = (op.parameters as Json[] | undefined) ?? [];
  if (params.length > 0) {
    out.push('| Parameter | In | Type | Required |', '|---|---|---|---|');
    for (const p of params) out.push(`| \`${cell(p.name)}\` | ${cell(p.in)} | ${cell(typeOf(p.schema))} | ${p.required ? 'yes' : 'no'} |`);
    out.push('');
  }
  const body = ((op.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json'] as Json | undefined;
  if (body) out.push(`Request body: ${typeOf(body.schema)}`, '');
  const responses = Object.entries((op.responses as Json | undefined) ?? {});
  if (responses.length > 0) {
    out.push('| Status | Meaning | Body |', '|---|---|---|');
    for (const [status, r] of responses) {
      const res = r as Json;
      const schema = ((res.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema;
      out.push(`| ${status} | ${cell(res.description)} | ${schema ? cell(typeOf(schema)) : ''} |`);
    }
    out.push('');
  }
  return out;
}

function schemaSection(name: string, schema: Json): string[] {
  const out = [`<h3 id="schema-${name.toLowerCase()}">${name}</h3>`, ''];
  if (schema.description) out.push(str(schema.description), '');
  const props = Object.entries((schema.properties as Json | undefined) ?? {});
  if (props.length === 0) return [...out, `Type: ${typeOf(schema)}`, ''];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  out.push('| Field | Type | Required | Description |', '|---|---|---|---|');
  for (const [field, p] of props) out.push(`| \`${field}\` | ${cell(typeOf(p))} | ${required.has(field) ? 'yes' : 'no'} | ${cell((p as Json).description)} |`);
  out.push('');
  return out;
}

export function apiReferenceMarkdown(doc: Json): string {
  const info = (doc.info as Json | undefined) ?? {};
  const out = [
    '# API reference',
    '',
    `Generated from the OpenAPI document this service serves at [/api/v1/openapi.json](/api/v1/openapi.json) (version ${str(info.version)}). ` +
      'Every `/api/v1` route takes a secret key as `Authorization: Bearer ask_…`; errors use the envelope described in [Errors](errors.md).',
    '',
  ];
  for (const [route, item] of Object.entries((doc.paths as Json | undefined) ?? {})) {
    for (const m of METHODS) {
      const op = (item as Json)[m] as Json | undefined;
      if (op) out.push(...operation(m, route, op));
    }
  }
  out.push('## Schemas', '');
  const schemas = ((doc.components as Json | undefined)?.schemas as Json | undefined) ?? {};
  for (const [name, schema] of Object.entries(schemas)) out.push(...schemaSection(name, schema as Json));
  return out.join('\n');
}
