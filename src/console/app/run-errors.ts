// What a user reads when a chat turn fails: the service's own message, said once. Its messages
// already say whose side failed ("The model endpoint … answered 500: …", "Could not reach the
// model endpoint …"), so only the codes whose message needs a lead get one.

/** A run's failure as the API reports it: the error event, or the JSON error of a refused invoke. */
export interface RunFailureView {
  code?: string;
  message: string;
  /** A 422's fields at fault: when present they are the message (its own words only name them). */
  details?: { path: string; message: string }[];
  /** Seconds to wait, from a 429's Retry-After. */
  retryAfter?: string;
}

/** The words a user sees for a failed run. */
export function runErrorText({ code, message, details = [], retryAfter }: RunFailureView): string {
  const said =
    details.length > 0 ? details.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ') : message;
  switch (code) {
    case 'upstream_timeout':
      return `The model did not answer in time. ${said}`;
    case 'max_steps':
      return `The agent used too many steps without answering. ${said}`;
    case 'rate_limited':
      return `Too many runs at once. ${said}${retryAfter ? ` Try again in ${retryAfter} s.` : ''}`;
    default:
      return said;
  }
}
