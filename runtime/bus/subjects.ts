/** NATS subject matching: tokens split on `.`, `*` matches one token, `>` the rest (one or more). */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    const tok = p[i];
    if (tok === '>') return s.length > i;
    if (i >= s.length) return false;
    if (tok !== '*' && tok !== s[i]) return false;
  }
  return p.length === s.length;
}

export const PARTITIONS = 16;

/** FNV-1a: stable across processes, so one actor always lands on one partition. */
export function partitionOf(key: string, partitions = PARTITIONS): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % partitions;
}

/** Subject on which events for one actor travel: `actor.<kind>.<partition>`. */
export function actorSubject(kind: string, actorId: string): string {
  return `actor.${kind}.${partitionOf(actorId)}`;
}
