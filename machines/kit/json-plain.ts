/**
 * Whether `v` is already what `JSON.parse(JSON.stringify(v))` gives: null, booleans, strings,
 * finite numbers other than -0, arrays without holes and plain objects (Object.prototype) of
 * such values, without symbol keys. Anything JSON would drop or change (undefined, a function,
 * NaN, a Date, a class instance, a symbol-keyed entry) makes it false. A walk costs a fraction
 * of parsing the text again, so a step keeps what the machine made when this holds (step.ts).
 */
export function isJsonPlain(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0);
    case 'object':
      if (v === null) return true;
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== Array.prototype) return false;
        // A hole reads as undefined, which is refused like a stored undefined.
        for (let i = 0; i < v.length; i++) if (!isJsonPlain(v[i])) return false;
        return plainKeys(v, v.length);
      }
      if (Object.getPrototypeOf(v) !== Object.prototype) return false;
      {
        let n = 0;
        for (const k in v) {
          n++;
          if (!isJsonPlain((v as Record<string, unknown>)[k])) return false;
        }
        return plainKeys(v, n);
      }
    default:
      return false;
  }
}

/** No own keys besides the `n` enumerable ones walked (none hidden, none a symbol). */
function plainKeys(o: object, n: number): boolean {
  return Object.getOwnPropertySymbols(o).length === 0 && Object.getOwnPropertyNames(o).length === n + (Array.isArray(o) ? 1 : 0);
}
