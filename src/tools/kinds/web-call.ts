// What the plain HTTP kinds and SEARCH share: the tool is one web address (metadata.url, optional
// headers, the headers secret), offered as one function that takes one string from the model. A kind
// built on this says only what the string is and what one call does with it.
import * as v from 'valibot';
import { targetFromMetadata, webTargetEntries, type HttpCallOptions } from '../runtime/http-call.js';
import { defineKind, offered, stringArgument, type ToolKind } from './kind.js';

/** Where a web call goes: the tool's metadata.url and its headers. */
export interface WebTarget {
  url: URL;
  headers: Record<string, string>;
}

export function webCallKind<const Type extends string>(spec: {
  type: Type;
  label: string;
  describe: () => string;
  /** The one argument the model gives: its name and what it is. */
  argument: { name: string; description: string };
  /** One call of the function: its answer to the model, or a ToolError. */
  call(value: string, target: WebTarget, options: HttpCallOptions): Promise<string>;
}): ToolKind<Type> {
  const { type, label, describe, argument } = spec;
  const parameters = {
    type: 'object',
    properties: { [argument.name]: { type: 'string', description: argument.description } },
    required: [argument.name],
    additionalProperties: false,
  };
  return defineKind({
    type,
    label,
    metadataSchema: v.looseObject(webTargetEntries),
    secretFields: ['headers'],
    describe,
    async build({ tool, http, name }) {
      const target = targetFromMetadata(tool.metadata);
      if (!target.ok) return target;
      return offered({
        name: name(tool.name),
        description: tool.description || describe(),
        parameters,
        toolId: tool.id,
        toolName: tool.name,
        call: async (args, context) => spec.call(stringArgument(args, argument.name), target.value, { ...http, ...context }),
      });
    },
  });
}
