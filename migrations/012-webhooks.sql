-- Webhooks: a user's receivers, and the outbox of their deliveries (written in the same transaction
-- as the change each one reports, sent by the dispatcher in src/webhooks/dispatcher.ts).
CREATE TABLE webhooks (
  seq                   INTEGER PRIMARY KEY,
  id                    TEXT    NOT NULL UNIQUE,
  user_id               TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  url                   TEXT    NOT NULL,
  events                TEXT    NOT NULL,
  description           TEXT    NOT NULL DEFAULT '',
  enabled               INTEGER NOT NULL DEFAULT 1,
  disabled_reason       TEXT,
  secret                TEXT    NOT NULL,
  previous_secret       TEXT,
  previous_secret_until INTEGER,
  failing_since         INTEGER,
  created_at            TEXT    NOT NULL,
  updated_at            TEXT    NOT NULL
);
CREATE INDEX webhooks_by_user ON webhooks (user_id, seq);

CREATE TABLE webhook_deliveries (
  seq              INTEGER PRIMARY KEY,
  id               TEXT    NOT NULL UNIQUE,
  webhook_id       TEXT    NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  user_id          TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  event            TEXT    NOT NULL,
  payload          TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  last_status_code INTEGER,
  last_error       TEXT,
  next_attempt_ms  INTEGER,
  created_at       TEXT    NOT NULL,
  delivered_at     TEXT
);
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, seq);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (user_id, next_attempt_ms) WHERE status = 'pending';
