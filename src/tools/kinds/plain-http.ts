// The plain HTTP kinds (ENGINE_ALPHA, HOSTED_MODEL, AUTOMATION_NLA): three names the API has always
// had for one behaviour. The input is POSTed as `{ "input": … }` to metadata.url (optional
// headers); the model gets the answer's text.
import * as v from 'valibot';
import { callHttp, targetFromMetadata, webTargetEntries } from '../runtime/http-call.js';
import { defineKind, offered, stringArgument } from './kind.js';

const INPUT_SCHEMA = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The text sent to the service.' } },
  required: ['input'],
  additionalProperties: false,
};

const describe = () => 'Sends the input to an external service and returns its answer as text.';

const plainHttpKind = <const Type extends string>(type: Type) =>
  defineKind({
    type,
    label: 'plain HTTP tool',
    metadataSchema: v.looseObject(webTargetEntries),
    secretFields: ['headers'],
    describe,
    async build({ tool, http, name }) {
      const target = targetFromMetadata(tool.metadata);
      if (!target.ok) return target;
      const { url, headers } = target.value;
      return offered({
        name: name(tool.name),
        description: tool.description || describe(),
        parameters: INPUT_SCHEMA,
        toolId: tool.id,
        toolName: tool.name,
        async call(args, context) {
          const input = stringArgument(args, 'input');
          return (await callHttp({ url, method: 'POST', headers, json: { input } }, { ...http, ...context })).text;
        },
      });
    },
  });

export const engineAlpha = plainHttpKind('ENGINE_ALPHA');
export const hostedModel = plainHttpKind('HOSTED_MODEL');
export const automationNla = plainHttpKind('AUTOMATION_NLA');
