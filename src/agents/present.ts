// The JSON shape of an agent: llm as `{ model, provider }` (other llm keys are never returned).
import type { Caller } from '../http/context.js';
import { presentUser } from '../users/present.js';
import { presentDocument } from '../documents/present.js';
import { presentTag } from '../tags/present.js';
import type { Agent, AgentBriefShape, LibraryAgent } from './schema.js';
import type { AgentBrief, AgentRow, LibraryAgentRow } from './store.js';

/** The llm without its key; `connectionId` only when the agent uses a connection (agents without one answer as before). */
function presentLlm(agent: AgentBrief): AgentBriefShape['llm'] {
  const llm: AgentBriefShape['llm'] = {
    model: agent.llmModel,
    provider: agent.llmProvider,
    baseUrl: agent.llmBaseUrl,
    hasApiKey: agent.hasApiKey,
  };
  if (agent.llmConnectionId !== null) llm.connectionId = agent.llmConnectionId;
  return llm;
}

/** An agent as nested in link records: no document or tags of its own. */
export function presentAgentBrief(agent: AgentBrief, owner: Caller): AgentBriefShape {
  return {
    id: agent.id,
    userId: agent.userId,
    user: presentUser(owner),
    name: agent.name,
    type: agent.type,
    llm: presentLlm(agent),
    hasMemory: agent.hasMemory,
    AgentMemory: agent.hasMemory ? { sessions: agent.memorySessions, messages: agent.memoryMessages } : null,
    promptId: agent.promptId,
    documentId: agent.documentId,
    description: agent.description,
    avatarUrl: agent.avatarUrl,
    isListed: agent.isListed,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
  };
}

/**
 * An agent as create, get, list and update return it. The brief's object is extended in place: on
 * Node 20, an object spread followed by new keys (`{ ...brief, document, tags }`) built a new hidden
 * class for every agent, which V8 keeps in the old generation, so every GET paid for full garbage
 * collections (tests/hidden-classes.test.ts keeps it so).
 */
export function presentAgent(agent: AgentRow, owner: Caller): Agent {
  return Object.assign(presentAgentBrief(agent, owner), {
    document: agent.document ? presentDocument(agent.document, owner) : {},
    tags: agent.tags.map(presentTag),
  });
}

/** A listed agent as the public library shows it: never its prompt, keys, base URL, documents or tools. */
export function presentLibraryAgent(agent: LibraryAgentRow): LibraryAgent {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    avatarUrl: agent.avatarUrl,
    type: agent.type as LibraryAgent['type'],
    llm: { model: agent.llmModel, provider: agent.llmProvider },
  };
}
