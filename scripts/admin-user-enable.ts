// `npm run user:enable`: undoes user:disable.
import { userStateScript } from './admin-user-state.js';

const USAGE = `Usage: npm run user:enable -- --email <email>

Enables the user with this email again (after npm run user:disable) in the database at
DATABASE_PATH: the user can sign in, and the API tokens the user still holds work again.

Options:
  --email <email>  the user's email
  -h, --help       show this help
`;

userStateScript(USAGE, false);
