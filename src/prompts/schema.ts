// The shapes of `/prompts`: request bodies and the prompt as answered.
import * as v from 'valibot';
import { NameSchema } from '../http/validate.js';
import { Id, Timestamp } from '../http/shapes.js';
import { VARIABLE_NAME } from './template.js';

const TemplateSchema = v.pipe(
  v.string('must be a string'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(100_000, 'must be at most 100000 characters'),
);

const InputVariablesSchema = v.pipe(
  v.array(
    v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.regex(VARIABLE_NAME, 'must be a variable name (letters, digits, _)'),
      // It could never be given a value: the body reader drops `__proto__` keys (`constructor` and
      // `prototype` are ordinary keys of `variables`, predict's `input` and OpenAI's `metadata`).
      v.check((name) => name !== '__proto__', 'cannot be __proto__ (a name JavaScript objects keep for themselves)'),
      v.maxLength(100, 'must be at most 100 characters'),
    ),
    'must be an array of strings',
  ),
  v.maxLength(100, 'must list at most 100 variables'),
  v.check((names) => new Set(names).size === names.length, 'must not list a variable twice'),
);

export const CreatePromptSchema = v.object({ name: NameSchema, template: TemplateSchema, input_variables: InputVariablesSchema });
export const UpdatePromptSchema = v.partial(CreatePromptSchema);
export type PromptInput = v.InferOutput<typeof CreatePromptSchema>;
export type PromptChange = v.InferOutput<typeof UpdatePromptSchema>;

export const PromptSchema = v.strictObject({
  id: Id,
  userId: Id,
  name: v.string(),
  template: v.string(),
  input_variables: v.array(v.string()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Prompt = v.InferOutput<typeof PromptSchema>;
