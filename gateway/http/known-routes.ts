/**
 * Paths the app serves and the verbs each takes, collected as routes register, so a known
 * path with the wrong verb is 405 `method_not_allowed` (with Allow) rather than 404.
 */
export class KnownRoutes {
  private readonly routes: Array<{ pattern: RegExp; methods: Set<string> }> = [];

  add(method: string | string[], url: string): void {
    const pattern = new RegExp(
      `^${url
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/')}$`,
    );
    let entry = this.routes.find((r) => r.pattern.source === pattern.source);
    if (!entry) this.routes.push((entry = { pattern, methods: new Set() }));
    for (const m of Array.isArray(method) ? method : [method]) entry.methods.add(m);
  }

  methodsFor(path: string): string[] {
    const out = new Set<string>();
    for (const r of this.routes) if (r.pattern.test(path)) for (const m of r.methods) out.add(m);
    return [...out].sort();
  }
}
