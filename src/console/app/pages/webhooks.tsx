// Webhooks: create one (its secret shown once, with a copy button), pick its events, enable or
// disable it, send a test event, and read its delivery log.
import { useState } from 'preact/hooks';
import { call, type Webhook, type WebhookDelivery, type WebhookEvent } from '../api.js';
import { DeleteButton } from '../delete-button.js';
import { useForm } from '../form.js';
import { PagedView, Table, type Column } from '../lists.js';
import { SecretCard } from '../secret-card.js';
import {
  Checkbox,
  ConfirmButton,
  describeError,
  ErrorNotice,
  fieldMessages,
  href,
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

const BLANK = { url: '', description: '', events: ['*'] };

export function WebhooksPage() {
  const [error, setError] = useState<string>();
  const list = usePagedList<Webhook>('/webhooks', 50, setError);
  const form = useForm(BLANK, ['url', 'description', 'events']);
  const [secret, setSecret] = useState<{ title: string; value: string }>();
  const [notice, setNotice] = useState<string>();

  const create = form.submit(async () => {
    const created = await call<Webhook & { secret: string }>('POST', '/webhooks', form.values);
    setSecret({ title: 'Your new webhook', value: created.secret });
    form.setValues(BLANK);
    await list.load();
  });

  /** Runs an action on one webhook; a changed webhook replaces the shown one. */
  async function act(action: () => Promise<Webhook | void>) {
    setError(undefined);
    setNotice(undefined);
    try {
      const changed = await action();
      if (changed) list.setItems((shown) => shown?.map((webhook) => (webhook.id === changed.id ? changed : webhook)));
    } catch (failure) {
      setError(describeError(failure));
    }
  }

  const path = (webhook: Webhook) => `/webhooks/${encodeURIComponent(webhook.id)}`;
  const columns: Column<Webhook>[] = [
    {
      label: 'URL',
      cell: (webhook) => (
        <>
          <a href={href(path(webhook))}>{webhook.url}</a>
          {webhook.description && <div class="muted">{webhook.description}</div>}
        </>
      ),
    },
    { label: 'Events', cell: (webhook) => eventsText(webhook.events) },
    {
      label: 'State',
      cell: (webhook) => (
        <>
          <StatusBadge status={webhook.enabled ? 'enabled' : 'disabled'} />
          {webhook.disabledReason && <div class="muted">{webhook.disabledReason}</div>}
        </>
      ),
    },
    {
      label: 'Actions',
      hideLabel: true,
      cell: (webhook) => (
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
          <DeleteButton
            path={path(webhook)}
            question="Delete this webhook and its delivery log?"
            then={() => act(() => list.load())}
            onError={setError}
          />
        </div>
      ),
    },
  ];

  return (
    <section>
      <PageTitle>Webhooks</PageTitle>
      <p>
        A webhook calls your URL when a run ends or a document is ready, signed as the Standard Webhooks specification says. Failed
        deliveries are tried again for about 17 hours.
      </p>
      <form class="card" onSubmit={create}>
        <h2>New webhook</h2>
        <ErrorNotice error={form.errors.message} />
        <TextField label="URL" name="url" {...form.field('url')} required hint="Where the events are POSTed (http or https)." />
        <TextField label="Description" name="description" {...form.field('description')} />
        <EventPicker events={form.values.events} onChange={form.set('events')} errors={form.errors} />
        <button type="submit" class="primary">
          Create webhook
        </button>
      </form>
      {secret && (
        <SecretCard
          id="webhook-secret"
          title={secret.title}
          label="Signing secret"
          secret={secret.value}
          onDone={() => setSecret(undefined)}
        >
          Copy it now: your receiver checks each delivery's signature with it, and the console will not show it again.
        </SecretCard>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <h2>Your webhooks</h2>
      <PagedView list={list} error={error} empty="No webhooks yet.">
        {(rows) => <Table rows={rows} columns={columns} rowData={(webhook) => ({ 'data-webhook-id': webhook.id })} />}
      </PagedView>
    </section>
  );
}

const DELIVERY_COLUMNS: Column<WebhookDelivery>[] = [
  { label: 'Event', cell: (delivery) => delivery.event },
  { label: 'Status', cell: (delivery) => <StatusBadge status={delivery.status} /> },
  { label: 'Attempts', cell: (delivery) => delivery.attempts },
  { label: 'Last answer', cell: (delivery) => delivery.lastStatusCode ?? <span class="muted">none</span> },
  { label: 'Last error', cell: (delivery) => delivery.lastError ?? <span class="muted">none</span> },
  { label: 'Created', cell: (delivery) => <Time value={delivery.createdAt} /> },
  { label: 'Next attempt', cell: (delivery) => <Time value={delivery.nextAttemptAt} /> },
];

/** One webhook's delivery log, newest first. */
export function WebhookPage({ id }: { id: string }) {
  const [error, setError] = useState<string>();
  const deliveries = usePagedList<WebhookDelivery>(`/webhooks/${encodeURIComponent(id)}/deliveries`, 50, setError);
  return (
    <section>
      <PageTitle>Deliveries</PageTitle>
      <p>
        <a href={href('/webhooks')}>All webhooks</a>
      </p>
      <button type="button" onClick={() => deliveries.load()}>
        Refresh
      </button>
      <PagedView list={deliveries} error={error} empty="Nothing was sent yet.">
        {(rows) => <Table rows={rows} columns={DELIVERY_COLUMNS} rowData={(delivery) => ({ 'data-delivery-id': delivery.id })} />}
      </PagedView>
    </section>
  );
}
