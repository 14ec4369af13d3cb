// `/prompts`: prompt templates with their input variables.
import type Router from '@koa/router';
import type { AppState } from '../http/context.js';
import type { Deps } from '../deps.js';
import { callerOf } from '../http/auth.js';
import { notFound, validationFailed } from '../http/errors.js';
import { created, ok, okPage } from '../http/respond.js';
import { parseBody, parseId, parsePageRequest } from '../http/validate.js';
import { presentPrompt } from './present.js';
import { CreatePromptSchema, UpdatePromptSchema, type PromptInput } from './schema.js';
import { templateMismatch } from './template.js';

/** The template must use exactly the variables the prompt declares. */
function checkTemplate(input: PromptInput): PromptInput {
  const issue = templateMismatch(input.template, input.input_variables);
  if (issue) throw validationFailed([issue]);
  return input;
}

export function promptRoutes(router: Router<AppState>, { stores, requireCaller }: Deps): void {
  const { prompts } = stores;

  router.get('/prompts', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const page = parsePageRequest(ctx, (id) => prompts.seqOfPrompt(caller.id, id));
    okPage(ctx, prompts.listPrompts(caller.id, page), presentPrompt);
  });

  router.post('/prompts', requireCaller, (ctx) => {
    const input = checkTemplate(parseBody(ctx, CreatePromptSchema));
    created(ctx, presentPrompt(prompts.createPrompt(callerOf(ctx).id, input)));
  });

  router.get('/prompts/:id', requireCaller, (ctx) => {
    const prompt = prompts.getPrompt(callerOf(ctx).id, parseId(ctx));
    if (!prompt) throw notFound('Prompt');
    ok(ctx, presentPrompt(prompt));
  });

  router.patch('/prompts/:id', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const id = parseId(ctx);
    const change = parseBody(ctx, UpdatePromptSchema);
    const stored = prompts.getPrompt(caller.id, id);
    if (!stored) throw notFound('Prompt');
    const next = checkTemplate({
      name: change.name ?? stored.name,
      template: change.template ?? stored.template,
      input_variables: change.input_variables ?? stored.inputVariables,
    });
    ok(ctx, presentPrompt(prompts.updatePrompt(caller.id, id, next)!));
  });

  router.delete('/prompts/:id', requireCaller, (ctx) => {
    if (!prompts.deletePrompt(callerOf(ctx).id, parseId(ctx))) throw notFound('Prompt');
    ok(ctx, null);
  });
}
