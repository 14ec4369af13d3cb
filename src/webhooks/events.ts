// What webhooks are told: the end of a run and of a document's ingestion. Each is put in the outbox
// by a hook of the store that writes the change, inside that same transaction, so a crash between
// the change and its delivery row loses or invents nothing. The body is `{ type, timestamp, data }`
// with `data` the run or document exactly as the API shows it.
import type { DocumentStore } from '../documents/store.js';
import type { IngestionStore } from '../documents/ingestion-store.js';
import { presentDocument } from '../documents/present.js';
import { timestamp } from '../lib/ids.js';
import { presentRun } from '../runs/present.js';
import type { RunStore } from '../runs/store.js';
import type { UserStore } from '../users/store.js';
import { WEBHOOK_EVENTS } from './schema.js';
import type { WebhookStore } from './store.js';

const EVENTS: ReadonlySet<string> = new Set(WEBHOOK_EVENTS);

export interface WebhookEventSources {
  webhooks: WebhookStore;
  runs: RunStore;
  chunks: IngestionStore;
  documents: DocumentStore;
  users: UserStore;
  /** Told after a delivery was put in the outbox (the dispatcher looks once the transaction is over). */
  wake(): void;
}

/** Subscribes the webhooks to the run store's and the ingestion store's changes of status. */
export function subscribeWebhookEvents({ webhooks, runs, chunks, documents, users, wake }: WebhookEventSources): void {
  /** Writes the deliveries of `event` for the user's subscribers; `data` is read only when there is one. */
  const report = (userId: string, event: string, data: () => unknown, woken = wake) => {
    if (!EVENTS.has(event)) return; // a status no event stands for (a run starting, say)
    const subscribers = webhooks.subscribersOf(userId, event);
    if (subscribers.length === 0) return;
    const payload = JSON.stringify({ type: event, timestamp: timestamp(), data: data() });
    webhooks.enqueue(userId, subscribers, event, payload);
    woken();
  };

  // The dispatcher is woken for a run's end once the end is on disk: its delivery does not compete
  // with the end's own sync, and a receiver is not told of an end a power cut could still take back.
  const wakeWhenDurable = () => runs.afterDurable(wake);
  runs.onChange(({ runId, userId, status }) =>
    report(
      userId,
      `run.${status}`,
      () => {
        const run = runs.getRun(userId, runId);
        if (!run) throw new Error(`run ${runId} changed but cannot be read`);
        return presentRun(run);
      },
      wakeWhenDurable,
    ),
  );

  chunks.onStatusChange(({ documentId, userId, status }) =>
    report(userId, `document.${status}`, () => {
      const document = documents.get(userId, documentId);
      const owner = users.get(userId);
      if (!document || !owner) throw new Error(`document ${documentId} changed but cannot be read`);
      return presentDocument(document, owner);
    }),
  );
}
