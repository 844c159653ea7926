/**
 * The demo seller's origin as the process serving it recorded it (ADR 0073). A process that
 * does not serve the demo seller (a `runtime` whose scanner probes the demo listings, a
 * marketplace without it) cannot derive the origin from its own settings, so the one that
 * listens writes it to `settings` and every process reads it from there. Exactly that origin
 * is allowed, never loopback in general (ADR 0037).
 */
import type { Db } from '../../../storage/db.ts';

const ORIGIN_KEY = 'market.demo_seller.origin';

/** Re-reads come at most this often: a refused target triggers one, and refusals can be many. */
const MAX_AGE_MS = 1_000;

/** Records where the demo seller listens; the last process to start it wins, as its listings do. */
export async function recordDemoSellerOrigin(db: Db, origin: string): Promise<void> {
  await db.query(`INSERT INTO settings (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [ORIGIN_KEY, JSON.stringify({ origin })]);
}

/** The demo seller runs beside the service: a record naming any other host widens nothing. */
const LOOPBACK_HOST = /^(?:127(?:\.\d{1,3}){3}|\[::1\]|localhost)$/;

/** A loopback http(s) origin exactly as `URL` spells it, or nothing: any other record allows nothing. */
export function asOrigin(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value && LOOPBACK_HOST.test(url.hostname) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The recorded origin, read lazily: `allows` answers from the last read, `refresh` reads again. */
export class RecordedDemoOrigin {
  private origin: string | undefined;
  private readAt = -Infinity;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: () => number = Date.now,
  ) {}

  readonly allows = (origin: string): boolean => this.origin !== undefined && origin === this.origin;

  /**
   * Reads the record unless it was read within the last second; concurrent callers share one
   * read. A read in flight is waited for first: its stamp is within the second, and a caller
   * answered before it ends would judge by what was known before it (two demo listings probed
   * at once: the second refused while the first one's read was still out).
   */
  refresh(): Promise<void> {
    if (this.reading) return this.reading;
    if (this.clock() - this.readAt < MAX_AGE_MS) return Promise.resolve();
    this.reading = this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(): Promise<void> {
    // Stamped before the read: while the database fails, refusals still read at most once a second.
    this.readAt = this.clock();
    const { rows } = await this.db.query<{ value: { origin?: unknown } | null }>(`SELECT value FROM settings WHERE key = $1`, [ORIGIN_KEY]);
    this.origin = asOrigin(rows[0]?.value?.origin);
  }
}
