/**
 * Fiat rate sources (DESIGN §4 "Fiat"): `ANM_RATES` (`USD=0.25,EUR=0.23`, a static table for
 * development) or `RATE_SOURCE_URL` (JSON `{"USD": "0.25"}` or `{"rates": {...}}`: the price
 * of 1 ANM in each currency). No source, or no rate for a currency: no quote, and the API
 * refuses with `currency_unsupported`. The service never guesses a price.
 */

export interface Quote {
  /** Price of 1 ANM in the currency, a plain decimal string. */
  rate: string;
  source: string;
  /** Unix milliseconds when the rate was obtained. */
  at: number;
}

export interface RateSource {
  quote(currency: string): Promise<Quote | null>;
  /** The currencies a quote can be had for now (the point of sale's keypad offers these). */
  currencies(): Promise<string[]>;
}

const RATE = /^[0-9]+(\.[0-9]+)?$/;
const CURRENCY = /^[A-Z]{3}$/;

function positiveRate(v: unknown): string | null {
  const s = typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
  return typeof s === 'string' && RATE.test(s) && /[1-9]/.test(s) ? s : null;
}

/** Parses `USD=0.25,EUR=0.23`; throws on anything malformed so a typo fails at startup. */
export function parseStaticRates(spec: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of spec.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [code = '', value = ''] = part.split('=').map((s) => s.trim());
    const rate = positiveRate(value);
    if (!CURRENCY.test(code.toUpperCase()) || rate === null) throw new Error(`ANM_RATES: cannot read ${JSON.stringify(part)} (want CODE=decimal)`);
    out.set(code.toUpperCase(), rate);
  }
  return out;
}

export class StaticRates implements RateSource {
  private readonly at = Date.now();
  constructor(private readonly table: Map<string, string>) {}

  async quote(currency: string): Promise<Quote | null> {
    const rate = this.table.get(currency);
    return rate ? { rate, source: 'ANM_RATES', at: this.at } : null;
  }

  async currencies(): Promise<string[]> {
    return [...this.table.keys()];
  }
}

export interface UrlRatesOptions {
  url: string;
  fetch?: typeof fetch;
  /** A fetched table is reused this long. */
  ttlMs?: number;
  /** When the source fails, a table this old is still used; older, no quote. */
  maxAgeMs?: number;
  timeoutMs?: number;
}

export class UrlRates implements RateSource {
  private table: { rates: Map<string, string>; at: number } | null = null;
  private inflight: Promise<void> | null = null;

  constructor(private readonly opts: UrlRatesOptions) {}

  async quote(currency: string): Promise<Quote | null> {
    const t = await this.fresh();
    const rate = t?.rates.get(currency);
    return t && rate ? { rate, source: this.opts.url, at: t.at } : null;
  }

  async currencies(): Promise<string[]> {
    return [...((await this.fresh())?.rates.keys() ?? [])];
  }

  /** The table, refreshed when older than the TTL; null when none is young enough to quote from. */
  private async fresh(): Promise<{ rates: Map<string, string>; at: number } | null> {
    const ttl = this.opts.ttlMs ?? 60_000;
    if (!this.table || Date.now() - this.table.at > ttl) await (this.inflight ??= this.refresh().finally(() => (this.inflight = null)));
    const t = this.table;
    return !t || Date.now() - t.at > (this.opts.maxAgeMs ?? 600_000) ? null : t;
  }

  private async refresh(): Promise<void> {
    try {
      const res = await (this.opts.fetch ?? fetch)(this.opts.url, { signal: AbortSignal.timeout(this.opts.timeoutMs ?? 3000) });
      if (!res.ok) return;
      const json = (await res.json()) as unknown;
      const obj = json && typeof json === 'object' && 'rates' in json ? json.rates : json;
      if (!obj || typeof obj !== 'object') return;
      const rates = new Map<string, string>();
      for (const [k, v] of Object.entries(obj)) {
        const rate = positiveRate(v);
        if (CURRENCY.test(k.toUpperCase()) && rate) rates.set(k.toUpperCase(), rate);
      }
      this.table = { rates, at: Date.now() };
    } catch {
      // Keep the last table; `quote` decides whether it is still young enough.
    }
  }
}

export class NoRates implements RateSource {
  async quote(): Promise<Quote | null> {
    return null;
  }

  async currencies(): Promise<string[]> {
    return [];
  }
}

export function rateSourceFromConfig(cfg: { ANM_RATES?: string | undefined; RATE_SOURCE_URL?: string | undefined }): RateSource {
  if (cfg.ANM_RATES) return new StaticRates(parseStaticRates(cfg.ANM_RATES));
  if (cfg.RATE_SOURCE_URL) return new UrlRates({ url: cfg.RATE_SOURCE_URL });
  return new NoRates();
}
