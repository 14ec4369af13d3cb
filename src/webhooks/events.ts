// What webhooks are told: the end of a run and of a document's ingestion. Each is put in the outbox
// by a hook of the store that writes the change, inside that same transaction, so a crash between
// the change and its delivery row loses or invents nothing. The body is `{ type, timestamp, data }`
// with `data` the run or document exactly as the API shows it. A run's end is committed before it
// is on disk (its WAL is synced after the commit): its deliveries are held until then, so a
// receiver is never told of an end a power cut could still take back.
import type { DocumentStore } from '../documents/store.js';
import type { IngestionStore } from '../documents/ingestion-store.js';
import { presentDocument } from '../documents/present.js';
import { timestamp } from '../lib/ids.js';
import { presentRun } from '../runs/present.js';
import type { RunStore } from '../runs/store.js';
import type { UserStore } from '../users/store.js';
import { WEBHOOK_EVENTS } from './schema.js';
import type { WebhookDispatcher } from './dispatcher.js';
import type { WebhookStore } from './store.js';

const EVENTS: ReadonlySet<string> = new Set(WEBHOOK_EVENTS);

export interface WebhookEventSources {
  webhooks: WebhookStore;
  runs: RunStore;
  chunks: IngestionStore;
  documents: DocumentStore;
  users: UserStore;
  /** The dispatcher (see dispatcher.ts): woken once deliveries are in the outbox, told which to hold until their change is on disk. */
  outbox: Pick<WebhookDispatcher, 'wake' | 'hold' | 'release'>;
}

/** Subscribes the webhooks to the run store's and the ingestion store's changes of status. */
export function subscribeWebhookEvents({ webhooks, runs, chunks, documents, users, outbox }: WebhookEventSources): void {
  /** Writes the deliveries of `event` for the user's subscribers (`data` is read only when there is one); their ids. */
  const report = (userId: string, event: string, data: () => unknown): string[] => {
    if (!EVENTS.has(event)) return []; // a status no event stands for (a run starting, say)
    const subscribers = webhooks.subscribersOf(userId, event);
    if (subscribers.length === 0) return [];
    const payload = JSON.stringify({ type: event, timestamp: timestamp(), data: data() });
    return webhooks.enqueue(userId, subscribers, event, payload).map((delivery) => delivery.id);
  };

  // A run's deliveries are sent once its end is on disk: they neither compete with the end's own
  // sync nor tell a receiver of an end a power cut could still take back (the dispatcher woken for
  // another delivery meanwhile leaves them be).
  runs.onChange(({ runId, userId, status }) => {
    const ids = report(userId, `run.${status}`, () => {
      const run = runs.getRun(userId, runId);
      if (!run) throw new Error(`run ${runId} changed but cannot be read`);
      return presentRun(run);
    });
    if (ids.length === 0) return;
    outbox.hold(ids);
    runs.afterDurable(() => outbox.release(ids));
  });

  // An ingestion's change is committed with its fsync: on disk once the transaction is over, when
  // the woken dispatcher looks.
  chunks.onStatusChange(({ documentId, userId, status }) => {
    const ids = report(userId, `document.${status}`, () => {
      const document = documents.get(userId, documentId);
      const owner = users.get(userId);
      if (!document || !owner) throw new Error(`document ${documentId} changed but cannot be read`);
      return presentDocument(document, owner);
    });
    if (ids.length > 0) outbox.wake();
  });
}
