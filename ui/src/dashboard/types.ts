/** What the server puts in a dashboard page's JSON data block (gateway/dashboard/pages.ts). */
export type DashPage = 'login' | 'signup' | 'home' | 'keys' | 'payments' | 'payment' | 'links' | 'invoices' | 'webhooks' | 'settings' | 'account';
export type DashMode = 'test' | 'live';

export interface DashPageData {
  page: DashPage;
  /** CSRF token of the session, sent as `x-csrf-token` on every write. */
  csrf: string;
  mode: DashMode;
  merchant: { name: string; handle: string; email: string } | null;
  /** The payment id on the payment page. */
  id: string | null;
  /** Whether /dashboard/signup is open. */
  signup: boolean;
}
