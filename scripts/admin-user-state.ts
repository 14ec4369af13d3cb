// What `npm run user:disable` and `npm run user:enable` share: find the user, change its state.
import { closeDatabase } from '../src/db.js';
import { loadServiceConfig, openExistingDatabase, parseCommandLine, parseEmail, runScript, UsageError } from './cli.js';

export function userStateScript(usage: string, disabled: boolean): void {
  runScript(usage, () => {
    const { values, positionals } = parseCommandLine(usage, { email: { type: 'string' } });
    if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    if (values.email === undefined) throw new UsageError('--email is required');
    const email = parseEmail(values.email);
    const { db, admin } = openExistingDatabase(loadServiceConfig());
    try {
      const user = admin.findUserByEmail(email);
      if (!user) throw new Error(`no user with the email ${email}`);
      const changed = admin.setUserDisabled(user.id, disabled);
      const state = disabled ? 'disabled' : 'enabled';
      process.stdout.write(changed ? `${user.email} ${state}\n` : `${user.email} was already ${state}\n`);
    } finally {
      closeDatabase(db);
    }
  });
}
