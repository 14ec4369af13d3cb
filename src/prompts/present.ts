// The JSON shape of a prompt (`input_variables` spelled as the original API does).
import type { Prompt } from './schema.js';
import type { PromptRow } from './store.js';

export function presentPrompt(prompt: PromptRow): Prompt {
  return {
    id: prompt.id,
    userId: prompt.userId,
    name: prompt.name,
    template: prompt.template,
    input_variables: prompt.inputVariables,
    createdAt: prompt.createdAt,
    updatedAt: prompt.updatedAt,
  };
}
