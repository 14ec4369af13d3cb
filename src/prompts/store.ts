// SQL for prompts.
import type { Db } from '../db.js';
import { columnMap, json } from '../lib/columns.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import { validationFailed } from '../http/errors.js';
import type { PromptChange, PromptInput } from './schema.js';
import { templateMismatch } from './template.js';

export interface PromptRow {
  id: string;
  userId: string;
  name: string;
  template: string;
  inputVariables: string[];
  createdAt: string;
  updatedAt: string;
}

const PROMPT_ROW = columnMap<PromptRow>({
  id: 'id',
  userId: 'user_id',
  name: 'name',
  template: 'template',
  inputVariables: json('input_variables'),
  createdAt: 'created_at',
  updatedAt: 'updated_at',
});

/** The template must use exactly the variables the prompt declares (else a 422 saying which). */
function checkTemplate(input: PromptInput): void {
  const issue = templateMismatch(input.template, input.input_variables);
  if (issue) throw validationFailed([issue]);
}

export type PromptStore = ReturnType<typeof createPromptStore>;

export function createPromptStore(db: Db) {
  const table = ownedTable(db, 'prompts', PROMPT_ROW);
  const insert = db.prepare(
    `INSERT INTO prompts (id, user_id, name, template, input_variables, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare(
    `UPDATE prompts SET name = ?, template = ?, input_variables = ?, updated_at = ? WHERE id = ? AND user_id = ? RETURNING ${PROMPT_ROW.select('prompts')}`,
  );

  return {
    get: table.get,
    seqOf: table.seqOf,
    list: table.list,
    /** Deletes the prompt; the schema clears `prompt_id` on agents that used it. */
    delete: table.delete,

    create(userId: string, input: PromptInput): PromptRow {
      checkTemplate(input);
      const now = timestamp();
      const row: PromptRow = {
        id: newId(),
        userId,
        name: input.name,
        template: input.template,
        inputVariables: input.input_variables,
        createdAt: now,
        updatedAt: now,
      };
      insert.run(row.id, userId, row.name, row.template, JSON.stringify(row.inputVariables), now, now);
      return row;
    },

    /** Applies `change` to the stored prompt and checks the result, in one transaction. */
    update: db.transaction((userId: string, id: string, change: PromptChange): PromptRow | undefined => {
      const stored = table.get(userId, id);
      if (!stored) return undefined;
      const next: PromptInput = {
        name: change.name ?? stored.name,
        template: change.template ?? stored.template,
        input_variables: change.input_variables ?? stored.inputVariables,
      };
      checkTemplate(next);
      return PROMPT_ROW.fromRow(
        update.get(next.name, next.template, JSON.stringify(next.input_variables), timestamp(), id, userId) as Record<string, unknown>,
      );
    }),
  };
}
