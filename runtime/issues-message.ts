/**
 * A schema's refusal in words, one way for every layer: each issue `path: message`, `whole`
 * naming the value itself where the issue is about all of it (zod gives it an empty path).
 * The API's `invalid_body` messages, the configuration's errors and the chain client's are
 * all written by these two.
 */
export interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

export function issueLine(issue: Issue, whole: string): string {
  return `${issue.path.map(String).join('.') || whole}: ${issue.message}`;
}

/** The issues joined in one message. */
export function issuesMessage(issues: readonly Issue[], whole = 'body'): string {
  return issues.map((i) => issueLine(i, whole)).join('; ');
}
