// The plain HTTP kinds (ENGINE_ALPHA, HOSTED_MODEL, AUTOMATION_NLA): three names the API has always
// had for one behaviour. The input is POSTed as `{ "input": … }` to metadata.url (optional
// headers); the model gets the answer's text.
import { callHttp } from '../runtime/http-call.js';
import { webCallKind } from './web-call.js';

const plainHttpKind = <const Type extends string>(type: Type) =>
  webCallKind({
    type,
    label: 'plain HTTP tool',
    describe: () => 'Sends the input to an external service and returns its answer as text.',
    argument: { name: 'input', description: 'The text sent to the service.' },
    call: async (input, { url, headers }, options) => (await callHttp({ url, method: 'POST', headers, json: { input } }, options)).text,
  });

export const engineAlpha = plainHttpKind('ENGINE_ALPHA');
export const hostedModel = plainHttpKind('HOSTED_MODEL');
export const automationNla = plainHttpKind('AUTOMATION_NLA');
