// The account (name, password, deletion) and its API tokens.
import { useState } from 'preact/hooks';
import { call, session, type ApiToken, type User } from '../api.js';
import { DeleteButton } from '../delete-button.js';
import { useForm } from '../form.js';
import { PagedView, Table, type Column } from '../lists.js';
import { SecretCard } from '../secret-card.js';
import { ConfirmButton, ErrorNotice, PageTitle, TextField, Time, usePagedList } from '../ui.js';

export function AccountPage({ user, onUserChange, onDeleted }: { user: User; onUserChange: (user: User) => void; onDeleted: () => void }) {
  const nameForm = useForm({ name: user.name }, ['name']);
  const noPasswords = { currentPassword: '', password: '' };
  const passwordForm = useForm(noPasswords, ['currentPassword', 'password']);
  const deleteForm = useForm({ password: '' }, ['password']);
  const [saved, setSaved] = useState<string>();

  const saveName = nameForm.submit(async () => {
    onUserChange(await call<User>('PATCH', '/auth/me', nameForm.values));
    setSaved('Your name was saved.');
  });

  const changePassword = passwordForm.submit(async () => {
    await call<User>('PATCH', '/auth/me', passwordForm.values);
    passwordForm.setValues(noPasswords);
    setSaved('Your password was changed.');
  });

  const deleteAccount = deleteForm.submit(async () => {
    await call('DELETE', '/auth/me', deleteForm.values);
    onDeleted();
  });

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
        <ErrorNotice error={nameForm.errors.message} />
        <TextField label="Name" name="name" {...nameForm.field('name')} required autoComplete="name" />
        <button type="submit" class="primary">
          Save name
        </button>
      </form>
      <form class="card" onSubmit={changePassword}>
        <h2>Password</h2>
        <ErrorNotice error={passwordForm.errors.message} />
        <TextField
          label="Current password"
          name="currentPassword"
          type="password"
          {...passwordForm.field('currentPassword')}
          required
          autoComplete="current-password"
        />
        <TextField
          label="New password"
          name="password"
          type="password"
          {...passwordForm.field('password')}
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
        <ErrorNotice error={deleteForm.errors.message} />
        <TextField label="Password" name="password" type="password" {...deleteForm.field('password')} autoComplete="current-password" />
        <ConfirmButton label="Delete account" question="Delete the account and everything in it?" onConfirm={deleteAccount} />
      </form>
    </section>
  );
}

export function TokensPage() {
  const [error, setError] = useState<string>();
  const tokens = usePagedList<ApiToken>('/api-tokens', 50, setError);
  const form = useForm({ description: '' }, ['description']);
  const [created, setCreated] = useState<ApiToken>();

  const create = form.submit(async () => {
    const token = await call<ApiToken>('POST', '/api-tokens', form.values);
    setCreated(token);
    form.setValues({ description: '' });
    await tokens.load();
  });

  const columns: Column<ApiToken>[] = [
    {
      label: 'Description',
      cell: (token) => (
        <>
          {token.description || <span class="muted">(no description)</span>}
          {token.id === session.tokenId() && <span class="badge">this session</span>}
        </>
      ),
    },
    { label: 'Created', cell: (token) => <Time value={token.createdAt} /> },
    { label: 'Last used', cell: (token) => <Time value={token.lastUsedAt} /> },
    { label: 'Expires', cell: (token) => (token.expiresAt ? <Time value={token.expiresAt} /> : <span class="muted">never</span>) },
    {
      label: 'Actions',
      hideLabel: true,
      cell: (token) => (
        <DeleteButton
          label="Revoke"
          path={`/api-tokens/${encodeURIComponent(token.id)}`}
          question={token.id === session.tokenId() ? 'Revoke the token of this session? You will be signed out.' : 'Revoke this token?'}
          then={async () => {
            if (created?.id === token.id) setCreated(undefined);
            await tokens.load();
          }}
          onError={setError}
        />
      ),
    },
  ];

  return (
    <section>
      <PageTitle>API tokens</PageTitle>
      <p>
        Tokens let scripts and other programs call the API as you: send one as <code>Authorization: Bearer &lt;token&gt;</code>.
      </p>
      <form class="card" onSubmit={create}>
        <h2>New token</h2>
        <ErrorNotice error={form.errors.message} />
        <TextField
          label="Description"
          name="description"
          {...form.field('description')}
          hint="What the token is for, e.g. “backup script”."
        />
        <button type="submit" class="primary">
          Create token
        </button>
      </form>
      {created && (
        <SecretCard id="new-token" title="Your new token" label="Token" secret={created.token} onDone={() => setCreated(undefined)}>
          Copy it now and keep it somewhere safe: the console will not show it again.
        </SecretCard>
      )}
      <h2>Your tokens</h2>
      <PagedView list={tokens} error={error} empty="No tokens. Create one above to call the API from a script.">
        {(items) => <Table rows={items} columns={columns} rowData={(token) => ({ 'data-token-id': token.id })} />}
      </PagedView>
    </section>
  );
}
