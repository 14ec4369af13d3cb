// The account (name, password, deletion) and its API tokens.
import { useState } from 'preact/hooks';
import { call, session, type ApiToken, type User } from '../api.js';
import {
  ConfirmButton,
  describeError,
  Empty,
  ErrorNotice,
  formErrors,
  Loading,
  noErrors,
  PageTitle,
  TextField,
  Time,
  usePagedList,
  type FormErrors,
} from '../ui.js';

export function AccountPage({ user, onUserChange, onDeleted }: { user: User; onUserChange: (user: User) => void; onDeleted: () => void }) {
  const [name, setName] = useState(user.name);
  const [nameErrors, setNameErrors] = useState<FormErrors>(noErrors);
  const [currentPassword, setCurrentPassword] = useState('');
  const [password, setPassword] = useState('');
  const [passwordErrors, setPasswordErrors] = useState<FormErrors>(noErrors);
  const [deletePassword, setDeletePassword] = useState('');
  const [deleteErrors, setDeleteErrors] = useState<FormErrors>(noErrors);
  const [saved, setSaved] = useState<string>();

  async function saveName(event: Event) {
    event.preventDefault();
    setNameErrors(noErrors);
    try {
      onUserChange(await call<User>('PATCH', '/auth/me', { name }));
      setSaved('Your name was saved.');
    } catch (error) {
      setNameErrors(formErrors(error, ['name']));
    }
  }

  async function changePassword(event: Event) {
    event.preventDefault();
    setPasswordErrors(noErrors);
    try {
      await call<User>('PATCH', '/auth/me', { currentPassword, password });
      setCurrentPassword('');
      setPassword('');
      setSaved('Your password was changed.');
    } catch (error) {
      setPasswordErrors(formErrors(error, ['currentPassword', 'password']));
    }
  }

  async function deleteAccount() {
    setDeleteErrors(noErrors);
    try {
      await call('DELETE', '/auth/me', { password: deletePassword });
      onDeleted();
    } catch (error) {
      setDeleteErrors(formErrors(error, ['password']));
    }
  }

  return (
    <section>
      <PageTitle>Account</PageTitle>
      <p>
        Signed in as <strong>{user.email}</strong>, member since <Time value={user.createdAt} />.
      </p>
      {saved && (
        <p class="notice" role="status">
          {saved}
        </p>
      )}
      <form class="card" onSubmit={saveName}>
        <h2>Name</h2>
        <ErrorNotice error={nameErrors.message} />
        <TextField label="Name" name="name" value={name} onInput={setName} errors={nameErrors} required autoComplete="name" />
        <button type="submit" class="primary">
          Save name
        </button>
      </form>
      <form class="card" onSubmit={changePassword}>
        <h2>Password</h2>
        <ErrorNotice error={passwordErrors.message} />
        <TextField
          label="Current password"
          name="currentPassword"
          type="password"
          value={currentPassword}
          onInput={setCurrentPassword}
          errors={passwordErrors}
          required
          autoComplete="current-password"
        />
        <TextField
          label="New password"
          name="password"
          type="password"
          value={password}
          onInput={setPassword}
          errors={passwordErrors}
          required
          autoComplete="new-password"
          hint="At least 8 characters."
        />
        <button type="submit" class="primary">
          Change password
        </button>
      </form>
      <form class="card danger-zone" onSubmit={(event) => event.preventDefault()}>
        <h2>Delete the account</h2>
        <p>This deletes the account and everything in it: agents, documents, tools, prompts, tags, runs and tokens. It cannot be undone.</p>
        <ErrorNotice error={deleteErrors.message} />
        <TextField
          label="Password"
          name="password"
          type="password"
          value={deletePassword}
          onInput={setDeletePassword}
          errors={deleteErrors}
          autoComplete="current-password"
        />
        <ConfirmButton label="Delete account" question="Delete the account and everything in it?" onConfirm={deleteAccount} />
      </form>
    </section>
  );
}

export function TokensPage() {
  const [error, setError] = useState<string>();
  const { items: tokens, next, load } = usePagedList<ApiToken>('/api-tokens', 50, setError);
  const [description, setDescription] = useState('');
  const [errors, setErrors] = useState<FormErrors>(noErrors);
  const [created, setCreated] = useState<ApiToken>();
  const [copied, setCopied] = useState(false);

  async function create(event: Event) {
    event.preventDefault();
    setErrors(noErrors);
    try {
      const token = await call<ApiToken>('POST', '/api-tokens', { description });
      setCreated(token);
      setCopied(false);
      setDescription('');
      await load();
    } catch (failure) {
      setErrors(formErrors(failure, ['description']));
    }
  }

  async function copy() {
    if (!created) return;
    try {
      await navigator.clipboard.writeText(created.token);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin): select the text so the user can copy it.
      const field = document.getElementById('new-token') as HTMLInputElement | null;
      field?.select();
    }
  }

  async function revoke(token: ApiToken) {
    try {
      await call('DELETE', `/api-tokens/${encodeURIComponent(token.id)}`);
      if (created?.id === token.id) setCreated(undefined);
      await load();
    } catch (failure) {
      setError(describeError(failure));
    }
  }

  return (
    <section>
      <PageTitle>API tokens</PageTitle>
      <p>
        Tokens let scripts and other programs call the API as you: send one as <code>Authorization: Bearer &lt;token&gt;</code>.
      </p>
      <form class="card" onSubmit={create}>
        <h2>New token</h2>
        <ErrorNotice error={errors.message} />
        <TextField
          label="Description"
          name="description"
          value={description}
          onInput={setDescription}
          errors={errors}
          hint="What the token is for, e.g. “backup script”."
        />
        <button type="submit" class="primary">
          Create token
        </button>
      </form>
      {created && (
        <div class="card secret" role="status">
          <h2>Your new token</h2>
          <p>Copy it now and keep it somewhere safe: the console will not show it again.</p>
          <label for="new-token">Token</label>
          <div class="row">
            <input id="new-token" readOnly value={created.token} onFocus={(event) => event.currentTarget.select()} />
            <button type="button" onClick={copy}>
              {copied ? 'Copied' : 'Copy'}
            </button>
            <button type="button" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      <h2>Your tokens</h2>
      <ErrorNotice error={error} />
      {!tokens ? (
        <Loading />
      ) : tokens.length === 0 ? (
        <Empty>No tokens. Create one above to call the API from a script.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Description</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((token) => (
                <tr key={token.id} data-token-id={token.id}>
                  <td data-label="Description">
                    {token.description || <span class="muted">(no description)</span>}
                    {token.id === session.tokenId() && <span class="badge">this session</span>}
                  </td>
                  <td data-label="Created">
                    <Time value={token.createdAt} />
                  </td>
                  <td data-label="Last used">
                    <Time value={token.lastUsedAt} />
                  </td>
                  <td data-label="Expires">{token.expiresAt ? <Time value={token.expiresAt} /> : <span class="muted">never</span>}</td>
                  <td>
                    <ConfirmButton
                      label="Revoke"
                      question={
                        token.id === session.tokenId() ? 'Revoke the token of this session? You will be signed out.' : 'Revoke this token?'
                      }
                      onConfirm={() => revoke(token)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next && (
        <button type="button" onClick={() => load(next)}>
          Show more
        </button>
      )}
    </section>
  );
}
