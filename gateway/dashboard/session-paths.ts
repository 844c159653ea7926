/**
 * Where the merchant's session cookie goes: the dashboard and the point of sale share one
 * session (DESIGN §7), so its cookie is set on each of their paths and on no other (never on
 * `/api/v1`, where a session cookie is refused).
 */
export const SESSION_COOKIE = 'anm_session';

const PATHS = ['/dashboard', '/pos'] as const;

export const MERCHANT_SESSION_PATHS = {
  /** The session options of the surface at `own`: its own path, then the others. */
  for(own: (typeof PATHS)[number]): { cookiePath: string; alsoPaths: string[] } {
    return { cookiePath: own, alsoPaths: PATHS.filter((p) => p !== own) };
  },
};
