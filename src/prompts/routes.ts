// `/prompts`: prompt templates with their input variables.
import { resourceRoutes } from '../http/resource-routes.js';
import { presentPrompt } from './present.js';
import { CreatePromptSchema, PromptSchema, UpdatePromptSchema } from './schema.js';
import type { PromptStore } from './store.js';

export function promptRoutes({ prompts }: { prompts: PromptStore }) {
  return resourceRoutes({
    path: '/prompts',
    tag: 'Prompts',
    names: { one: 'prompt', One: 'Prompt', Many: 'Prompts', what: 'Prompt' },
    schema: PromptSchema,
    present: presentPrompt,
    store: prompts,
    create: {
      body: CreatePromptSchema,
      description:
        'Every `{name}` in the template must be listed in `input_variables` and every listed variable used (`{{` and `}}` are literal braces).',
    },
    update: { body: UpdatePromptSchema, description: 'The prompt as it would be after the change is checked as on create.' },
    delete: { answers: 'null', description: "Agents' `promptId` becomes null." },
  });
}
