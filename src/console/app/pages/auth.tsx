// Sign in and sign up. Signing up signs in right after, with the same email and password. Sign-up
// is offered only when the service says it is open (GET /auth/options).
import { useEffect, useState } from 'preact/hooks';
import { call, get, session, type ApiToken, type User } from '../api.js';
import { ErrorNotice, formErrors, noErrors, TextField, type FormErrors } from '../ui.js';

interface SignIn {
  user: User;
  token: string;
  apiToken: ApiToken;
}

export function AuthPage({ notice, onSignedIn }: { notice?: string; onSignedIn: (user: User) => void }) {
  const [mode, setMode] = useState<'sign-in' | 'sign-up'>('sign-in');
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<FormErrors>(noErrors);
  const [busy, setBusy] = useState(false);
  // Unknown (undefined) until the service answers; if it cannot say, sign-up is offered and its
  // own answer explains a refusal.
  const [signUpOpen, setSignUpOpen] = useState<boolean>();
  const signingUp = signUpOpen === true && mode === 'sign-up';

  useEffect(() => {
    get<{ signUp: boolean }>('/auth/options').then(
      (options) => setSignUpOpen(options.signUp),
      () => setSignUpOpen(true),
    );
  }, []);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setErrors(noErrors);
    try {
      if (signingUp) await call('POST', '/auth/sign-up', { name: name || undefined, email, password });
      const signedIn = await call<SignIn>('POST', '/auth/sign-in', { email, password });
      session.save(signedIn.token, signedIn.apiToken.id);
      onSignedIn(signedIn.user);
    } catch (error) {
      setErrors(formErrors(error, ['name', 'email', 'password']));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="auth">
      <h1 id="page-title" tabIndex={-1}>
        Agent console
      </h1>
      <p class="muted">Manage your agents, documents and tools, and chat with your agents.</p>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {signUpOpen === undefined ? null : signUpOpen ? (
        <div class="tabs" role="tablist" aria-label="Account">
          <button type="button" role="tab" aria-selected={!signingUp} onClick={() => setMode('sign-in')}>
            Sign in
          </button>
          <button type="button" role="tab" aria-selected={signingUp} onClick={() => setMode('sign-up')}>
            Create an account
          </button>
        </div>
      ) : (
        <p class="hint" data-testid="sign-up-closed">
          Accounts on this service are created by its operator.
        </p>
      )}
      <form onSubmit={submit} aria-label={signingUp ? 'Create an account' : 'Sign in'}>
        <h2>{signingUp ? 'Create an account' : 'Sign in'}</h2>
        <ErrorNotice error={errors.message} />
        {signingUp && (
          <TextField
            label="Name"
            name="name"
            value={name}
            onInput={setName}
            errors={errors}
            autoComplete="name"
            hint="Optional: the part of your email before @ otherwise."
          />
        )}
        <TextField label="Email" name="email" type="email" value={email} onInput={setEmail} errors={errors} required autoComplete="email" />
        <TextField
          label="Password"
          name="password"
          type="password"
          value={password}
          onInput={setPassword}
          errors={errors}
          required
          autoComplete={signingUp ? 'new-password' : 'current-password'}
          hint={signingUp ? 'At least 8 characters.' : undefined}
        />
        <button type="submit" class="primary" disabled={busy}>
          {signingUp ? 'Create account' : 'Sign in'}
        </button>
      </form>
    </section>
  );
}
