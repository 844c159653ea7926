/**
 * Where the merchant's session cookie goes: the dashboard and the point of sale share one
 * session (DESIGN §7), and a test-mode payment link (`/p/{handle}/{slug}`) is payable only with
 * its merchant's session, so the cookie is set on each of these paths and on no other (never
 * on `/api/v1`, where a session cookie is refused). `Path=/p` does not match `/pos`.
 */
export const SESSION_COOKIE = 'anm_session';

const PATHS = ['/dashboard', '/pos', '/p'] as const;

export const MERCHANT_SESSION_PATHS = {
  /** The session options of the surface at `own`: its own path, then the others. */
  for(own: (typeof PATHS)[number]): { cookiePath: string; alsoPaths: string[] } {
    return { cookiePath: own, alsoPaths: PATHS.filter((p) => p !== own) };
  },
};
