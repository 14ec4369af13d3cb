// `npm run user:disable`: the account can no longer sign in and its API tokens stop working.
import { userStateScript } from './admin-user-state.js';

const USAGE = `Usage: npm run user:disable -- --email <email>

Disables the user with this email in the database at DATABASE_PATH: sign-in answers 401 and every
API token of the user is refused (401) from the next request on, also while the service runs.
Nothing is deleted: npm run user:enable undoes it, and the user's tokens work again (revoke them
with npm run token:revoke if they may have leaked). To remove the account, use user:delete.

Options:
  --email <email>  the user's email
  -h, --help       show this help
`;

userStateScript(USAGE, true);
