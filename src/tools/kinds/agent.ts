// AGENT: another of the caller's agents (metadata.agentId), asked with `{ query }` and run by the
// run engine as a nested run of its own (which bounds the depth and refuses a cycle: both come
// back to the model as the tool's error, not as a failed run).
import * as v from 'valibot';
import { defineKind, offered, stringArgument } from './kind.js';

const QUERY_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string', description: 'The question or task for the agent.' } },
  required: ['query'],
  additionalProperties: false,
};

const describe = (agentName?: string) =>
  `Asks ${agentName ? `the agent "${agentName}"` : 'another agent'} a question and returns its answer.`;

export const agent = defineKind({
  type: 'AGENT',
  label: 'asks another of your agents',
  metadataSchema: v.looseObject({ agentId: v.optional(v.string('must be the id of one of your agents')) }),
  secretFields: [],
  agentFields: ['agentId'],
  describe,
  async build({ tool, findAgent, name }) {
    const agentId = tool.metadata.agentId;
    if (typeof agentId !== 'string' || agentId === '') return { ok: false, reason: 'metadata.agentId is missing' };
    const target = findAgent(agentId);
    if (!target) return { ok: false, reason: 'the agent it calls (metadata.agentId) no longer exists' };
    return offered({
      name: name(tool.name),
      description: tool.description || describe(target.name),
      parameters: QUERY_SCHEMA,
      toolId: tool.id,
      toolName: tool.name,
      call: async (args, context) => context.runChild(target.id, stringArgument(args, 'query')),
    });
  },
});
