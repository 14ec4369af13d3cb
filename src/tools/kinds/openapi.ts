// OPENAPI: the operations of an OpenAPI 3.x document (metadata.url, or the document itself as
// metadata.spec), one function each, called on the document's own server with metadata.headers.
// Reading the document, and the limits on it, are in ../runtime/openapi.ts.
import * as v from 'valibot';
import { webTargetEntries } from '../runtime/http-call.js';
import { inlineSpecProblem, openApiTools } from '../runtime/openapi.js';
import { defineKind } from './kind.js';

/** An inline spec: an object, or JSON or YAML text, refused when it cannot be read or is over the limits once its `$ref`s are inlined. */
const InlineSpecSchema = v.pipeAsync(
  v.nullish(
    v.union(
      [v.string(), v.custom<object>((value) => typeof value === 'object' && value !== null && !Array.isArray(value))],
      'must be the OpenAPI document, as an object or as JSON or YAML text',
    ),
  ),
  v.rawCheckAsync(async ({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = await inlineSpecProblem({ spec: dataset.value });
    if (problem !== undefined) addIssue({ message: problem });
  }),
);

export const openApi = defineKind({
  type: 'OPENAPI',
  label: 'operations of an OpenAPI document',
  metadataSchema: v.looseObjectAsync({ ...webTargetEntries, spec: InlineSpecSchema }),
  secretFields: ['headers'],
  specFields: ['spec'],
  describe: () => 'Calls an operation of a web API.',
  build: ({ tool, name, http, signal, deadline }) => openApiTools(tool, name, http, signal, deadline),
});
