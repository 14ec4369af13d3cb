-- An operator can disable an account (npm run user:disable): while disabled_at is set, sign-in
-- answers 401 and the account's API tokens are refused; user:enable clears it, and the tokens work again.
ALTER TABLE users ADD COLUMN disabled_at TEXT;
