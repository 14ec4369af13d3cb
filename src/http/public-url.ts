// A URL a user gives for the service to call later (a webhook's receiver, a connection's model
// server): vetted by the SSRF guard when it is stored, a refusal answered as a 422 at its field. The
// guard vets it again on every call, as the host may resolve elsewhere by then.
import { isIngestError } from '../ingest/errors.js';
import { vetHost, type ResolvedAddress } from '../ingest/fetch.js';
import { validationFailed } from './errors.js';

export interface PublicUrlRule {
  allowPrivateNetworks: boolean;
  /** Tests only: answers the DNS lookups. */
  resolveHost?: (host: string) => Promise<ResolvedAddress[]>;
}

/** The rule in words, for the description of a route that takes such a URL (`subject`: how it names it). */
export const publicUrlText = (subject: string) =>
  `${subject} must be http(s) without credentials, and its host must not be (or resolve to) a loopback, private or other internal address ` +
  'unless the operator allows private networks: 422 naming the reason otherwise.';

/** Nothing when `url` (absent or) passes the SSRF guard; a 422 at `field` saying why it does not. */
export async function checkPublicUrl(url: string | undefined, field: string, rule: PublicUrlRule): Promise<void> {
  if (url === undefined) return;
  try {
    await vetHost(new URL(url), { allowPrivateNetworks: rule.allowPrivateNetworks, resolve: rule.resolveHost });
  } catch (error) {
    if (isIngestError(error)) throw validationFailed([{ path: field, message: error.message }]);
    throw error;
  }
}
