// Webhooks: create one (its secret shown once, with a copy button), pick its events, enable or
// disable it, send a test event, and read its delivery log.
import { useState } from 'preact/hooks';
import { call, type Webhook, type WebhookDelivery, type WebhookEvent } from '../api.js';
import {
  Checkbox,
  ConfirmButton,
  describeError,
  Empty,
  ErrorNotice,
  fieldMessages,
  formErrors,
  href,
  Loading,
  noErrors,
  PageTitle,
  StatusBadge,
  TextField,
  Time,
  usePagedList,
  type FormErrors,
} from '../ui.js';

/** The events a webhook can be sent (the service checks the names; a typo here fails the build). */
const EVENTS: { name: WebhookEvent; label: string }[] = [
  { name: 'run.succeeded', label: 'A run succeeded' },
  { name: 'run.failed', label: 'A run failed' },
  { name: 'run.cancelled', label: 'A run was cancelled' },
  { name: 'run.requires_action', label: 'A run waits for an approval' },
  { name: 'document.ready', label: 'A document is ready' },
  { name: 'document.failed', label: 'A document failed to ingest' },
];

const eventsText = (events: string[]) => (events.includes('*') ? 'all events' : events.join(', '));

/** The event picker: every event, or some of them. */
function EventPicker({ events, onChange, errors }: { events: string[]; onChange: (events: string[]) => void; errors: FormErrors }) {
  const all = events.includes('*');
  const messages = fieldMessages(errors, 'events');
  return (
    <fieldset class="field">
      <legend>Events</legend>
      <Checkbox
        label="All events, present and future"
        name="event-all"
        checked={all}
        onChange={(checked) => onChange(checked ? ['*'] : [])}
      />
      {!all &&
        EVENTS.map((event) => (
          <Checkbox
            key={event.name}
            label={`${event.label} (${event.name})`}
            name={`event-${event.name}`}
            checked={events.includes(event.name)}
            onChange={(checked) => onChange(checked ? [...events, event.name] : events.filter((name) => name !== event.name))}
          />
        ))}
      {messages.map((message) => (
        <p class="field-error" key={message}>
          Events: {message}
        </p>
      ))}
    </fieldset>
  );
}

/** A secret shown once, with a copy button. */
function SecretCard({ title, secret, onDone }: { title: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin): select the text so the user can copy it.
      (document.getElementById('webhook-secret') as HTMLInputElement | null)?.select();
    }
  }
  return (
    <div class="card secret" role="status">
      <h2>{title}</h2>
      <p>Copy it now: your receiver checks each delivery's signature with it, and the console will not show it again.</p>
      <label for="webhook-secret">Signing secret</label>
      <div class="row">
        <input id="webhook-secret" readOnly value={secret} onFocus={(event) => event.currentTarget.select()} />
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

export function WebhooksPage() {
  const [error, setError] = useState<string>();
  const { items: webhooks, setItems, next, load } = usePagedList<Webhook>('/webhooks', 50, setError);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>(['*']);
  const [errors, setErrors] = useState<FormErrors>(noErrors);
  const [secret, setSecret] = useState<{ title: string; value: string }>();
  const [notice, setNotice] = useState<string>();

  async function create(event: Event) {
    event.preventDefault();
    setErrors(noErrors);
    try {
      const created = await call<Webhook & { secret: string }>('POST', '/webhooks', { url, description, events });
      setSecret({ title: 'Your new webhook', value: created.secret });
      setUrl('');
      setDescription('');
      setEvents(['*']);
      await load();
    } catch (failure) {
      setErrors(formErrors(failure, ['url', 'description', 'events']));
    }
  }

  /** Runs an action on one webhook; a changed webhook replaces the shown one. */
  async function act(action: () => Promise<Webhook | void>) {
    setError(undefined);
    setNotice(undefined);
    try {
      const changed = await action();
      if (changed) setItems((shown) => shown?.map((webhook) => (webhook.id === changed.id ? changed : webhook)));
    } catch (failure) {
      setError(describeError(failure));
    }
  }

  const path = (webhook: Webhook) => `/webhooks/${encodeURIComponent(webhook.id)}`;

  return (
    <section>
      <PageTitle>Webhooks</PageTitle>
      <p>
        A webhook calls your URL when a run ends or a document is ready, signed as the Standard Webhooks specification says. Failed
        deliveries are tried again for about 17 hours.
      </p>
      <form class="card" onSubmit={create}>
        <h2>New webhook</h2>
        <ErrorNotice error={errors.message} />
        <TextField
          label="URL"
          name="url"
          value={url}
          onInput={setUrl}
          errors={errors}
          required
          hint="Where the events are POSTed (http or https)."
        />
        <TextField label="Description" name="description" value={description} onInput={setDescription} errors={errors} />
        <EventPicker events={events} onChange={setEvents} errors={errors} />
        <button type="submit" class="primary">
          Create webhook
        </button>
      </form>
      {secret && <SecretCard title={secret.title} secret={secret.value} onDone={() => setSecret(undefined)} />}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <h2>Your webhooks</h2>
      <ErrorNotice error={error} />
      {!webhooks ? (
        <Loading />
      ) : webhooks.length === 0 ? (
        <Empty>No webhooks yet.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {webhooks.map((webhook) => (
                <tr key={webhook.id} data-webhook-id={webhook.id}>
                  <td data-label="URL">
                    <a href={href(path(webhook))}>{webhook.url}</a>
                    {webhook.description && <div class="muted">{webhook.description}</div>}
                  </td>
                  <td data-label="Events">{eventsText(webhook.events)}</td>
                  <td data-label="State">
                    <StatusBadge status={webhook.enabled ? 'enabled' : 'disabled'} />
                    {webhook.disabledReason && <div class="muted">{webhook.disabledReason}</div>}
                  </td>
                  <td>
                    <div class="actions">
                      <button type="button" onClick={() => act(() => call<Webhook>('PATCH', path(webhook), { enabled: !webhook.enabled }))}>
                        {webhook.enabled ? 'Disable' : 'Enable'}
                      </button>
                      <button
                        type="button"
                        onClick={() =>
                          act(async () => {
                            await call('POST', `${path(webhook)}/test`);
                            setNotice(`A test event is on its way to ${webhook.url}: see its deliveries.`);
                          })
                        }
                      >
                        Send test event
                      </button>
                      <ConfirmButton
                        label="Rotate secret"
                        question="Make a new secret? The current one keeps signing beside it for 24 hours."
                        onConfirm={() =>
                          act(async () => {
                            const rotated = await call<{ secret: string }>('POST', `${path(webhook)}/rotate-secret`);
                            setSecret({ title: `The new secret of ${webhook.url}`, value: rotated.secret });
                          })
                        }
                      />
                      <ConfirmButton
                        label="Delete"
                        question="Delete this webhook and its delivery log?"
                        onConfirm={() => act(async () => void (await call('DELETE', path(webhook)), await load()))}
                      />
                    </div>
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

/** One webhook's delivery log, newest first. */
export function WebhookPage({ id }: { id: string }) {
  const [error, setError] = useState<string>();
  const path = `/webhooks/${encodeURIComponent(id)}/deliveries`;
  const { items: deliveries, next, load } = usePagedList<WebhookDelivery>(path, 50, setError);
  return (
    <section>
      <PageTitle>Deliveries</PageTitle>
      <p>
        <a href={href('/webhooks')}>All webhooks</a>
      </p>
      <button type="button" onClick={() => load()}>
        Refresh
      </button>
      <ErrorNotice error={error} />
      {!deliveries ? (
        <Loading />
      ) : deliveries.length === 0 ? (
        <Empty>Nothing was sent yet.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Last error</th>
                <th scope="col">Created</th>
                <th scope="col">Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((delivery) => (
                <tr key={delivery.id} data-delivery-id={delivery.id}>
                  <td data-label="Event">{delivery.event}</td>
                  <td data-label="Status">
                    <StatusBadge status={delivery.status} />
                  </td>
                  <td data-label="Attempts">{delivery.attempts}</td>
                  <td data-label="Last answer">{delivery.lastStatusCode ?? <span class="muted">none</span>}</td>
                  <td data-label="Last error">{delivery.lastError ?? <span class="muted">none</span>}</td>
                  <td data-label="Created">
                    <Time value={delivery.createdAt} />
                  </td>
                  <td data-label="Next attempt">
                    <Time value={delivery.nextAttemptAt} />
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
