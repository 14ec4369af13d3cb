// SQL for prompts.
import type { Db } from '../db.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import type { PromptInput } from './schema.js';

export interface PromptRow {
  id: string;
  userId: string;
  name: string;
  template: string;
  inputVariables: string[];
  createdAt: string;
  updatedAt: string;
}

const COLUMNS =
  'id, user_id AS userId, name, template, input_variables AS inputVariables, created_at AS createdAt, updated_at AS updatedAt';

function fromRow(raw: Record<string, unknown>): PromptRow {
  return { ...(raw as unknown as PromptRow), inputVariables: JSON.parse(raw.inputVariables as string) };
}

export type PromptStore = ReturnType<typeof createPromptStore>;

export function createPromptStore(db: Db) {
  const table = ownedTable(db, 'prompts', COLUMNS, fromRow);
  const insert = db.prepare(
    `INSERT INTO prompts (id, user_id, name, template, input_variables, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare(
    `UPDATE prompts SET name = ?, template = ?, input_variables = ?, updated_at = ? WHERE id = ? AND user_id = ? RETURNING ${COLUMNS}`,
  );

  return {
    getPrompt: table.get,
    seqOfPrompt: table.seqOf,
    listPrompts: table.list,
    /** Deletes the prompt; the schema clears `prompt_id` on agents that used it. */
    deletePrompt: table.delete,

    createPrompt(userId: string, input: PromptInput): PromptRow {
      const now = timestamp();
      const row: PromptRow = { id: newId(), userId, name: input.name, template: input.template, inputVariables: input.input_variables, createdAt: now, updatedAt: now };
      insert.run(row.id, userId, row.name, row.template, JSON.stringify(row.inputVariables), now, now);
      return row;
    },

    /** Replaces the prompt's fields with `next` (the stored record with the change applied). */
    updatePrompt(userId: string, id: string, next: PromptInput): PromptRow | undefined {
      const raw = update.get(next.name, next.template, JSON.stringify(next.input_variables), timestamp(), id, userId);
      return raw === undefined ? undefined : fromRow(raw as Record<string, unknown>);
    },
  };
}
