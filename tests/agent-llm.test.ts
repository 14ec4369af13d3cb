// src/agents/llm.ts: an agent's llm as the body spells it, how a PATCH merges into the stored one
// (a key goes only to the server it was given for), the server it points to, and the check on save.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import {
  llmEndpoint,
  LlmChangeSchema,
  llmProblem,
  LlmSchema,
  mergeLlm,
  throughConnection,
  type Llm,
  type LlmChange,
} from '../src/agents/llm.js';

const KEY = 'sk-stored-key-1234';
const NEW_KEY = 'sk-new-key-5678';
const operator = {
  openaiBaseUrl: 'https://api.openai.example/v1',
  openaiApiKey: 'sk-operator',
  ollamaBaseUrl: 'http://ollama.example:11434/v1',
};

const stored = (llm: Partial<Llm> = {}): Llm => ({
  model: 'm',
  provider: 'openai',
  baseUrl: null,
  apiKey: KEY,
  connectionId: null,
  ...llm,
});
const change = (body: unknown): LlmChange => v.parse(LlmChangeSchema, body);

describe('parsing the body', () => {
  test('the other spellings are the same fields; unknown keys are accepted and not kept', () => {
    assert.deepEqual(
      v.parse(LlmSchema, { model: ' gpt ', provider: 'openai', base_url: 'https://models.example.com/v1', api_key: KEY, temperature: 0.2 }),
      {
        model: 'gpt',
        provider: 'openai',
        baseUrl: 'https://models.example.com/v1',
        apiKey: KEY,
        connectionId: null,
      },
    );
    assert.deepEqual(v.parse(LlmSchema, { model: 'gpt', provider: 'openai' }), {
      model: 'gpt',
      provider: 'openai',
      baseUrl: null,
      apiKey: null,
      connectionId: null,
    });
    assert.deepEqual(
      v.parse(LlmSchema, { model: 'gpt', provider: 'openai', baseUrl: null, base_url: 'https://x.example/v1' }).baseUrl,
      null,
      'the camelCase spelling wins',
    );
  });

  test('a PATCH keeps "not sent" apart from null', () => {
    assert.deepEqual(change({ model: 'm2', temperature: null }), {
      model: 'm2',
      provider: undefined,
      baseUrl: undefined,
      apiKey: undefined,
      connectionId: undefined,
    });
    assert.deepEqual(change({ api_key: null }), {
      model: undefined,
      provider: undefined,
      baseUrl: undefined,
      apiKey: null,
      connectionId: undefined,
    });
  });
});

describe('merging a PATCH', () => {
  test('on a connection: the model changes alone; a server, key or other provider of its own leaves it; connectionId null leaves it', () => {
    const onConnection = stored({ provider: 'ollama', apiKey: null, connectionId: 'c1' });
    assert.deepEqual(mergeLlm(onConnection, change({ model: 'm2' })), { ...onConnection, model: 'm2' });
    assert.deepEqual(mergeLlm(onConnection, change({ provider: 'ollama' })), onConnection, 'the same provider, as old clients resend it');
    assert.deepEqual(mergeLlm(onConnection, change({ baseUrl: 'https://models.example.com/v1' })), {
      ...onConnection,
      baseUrl: 'https://models.example.com/v1',
      connectionId: null,
    });
    assert.deepEqual(mergeLlm(onConnection, change({ apiKey: NEW_KEY })), { ...onConnection, apiKey: NEW_KEY, connectionId: null });
    assert.equal(mergeLlm(onConnection, change({ provider: 'openai' })).connectionId, null);
    assert.equal(mergeLlm(onConnection, change({ connectionId: null })).connectionId, null);
    // Onto a connection: the agent's own server and key go.
    const own = stored({ baseUrl: 'https://models.example.com/v1' });
    assert.deepEqual(mergeLlm(own, change({ connectionId: 'c2' })), { ...own, baseUrl: null, apiKey: null, connectionId: 'c2' });
  });

  test('a run takes provider, server and key from the connection as it is now', () => {
    const onConnection = stored({ apiKey: null, connectionId: 'c1' });
    const settings = { provider: 'openai-compatible', baseUrl: 'https://models.example.com/v1', apiKey: NEW_KEY };
    assert.deepEqual(throughConnection(onConnection, settings), { ...onConnection, ...settings });
    assert.deepEqual(throughConnection(onConnection, undefined), {
      problem: { path: 'llm.connectionId', message: 'names a connection that does not exist (any more)' },
    });
    assert.deepEqual(throughConnection(stored(), settings), stored(), 'an agent without a connection is left as it is');
  });

  test('keys not sent stay; apiKey null clears the key', () => {
    assert.deepEqual(mergeLlm(stored(), change({ model: 'm2' })), stored({ model: 'm2' }));
    assert.deepEqual(mergeLlm(stored(), change({ apiKey: null })), stored({ apiKey: null }));
    assert.deepEqual(mergeLlm(stored(), change({ apiKey: NEW_KEY })), stored({ apiKey: NEW_KEY }));
  });

  test('a baseUrl on another origin drops the stored key unless the change sends one again', () => {
    const atModels = stored({ provider: 'openai-compatible', baseUrl: 'http://models.example.com:8000/v1' });
    const cases: Array<[body: object, apiKey: string | null, why: string]> = [
      [{ baseUrl: 'http://models.example.com:8000/v2' }, KEY, 'another path on the same origin'],
      [{ baseUrl: 'http://MODELS.example.com:8000/v1/' }, KEY, 'the same origin spelled otherwise'],
      [{ model: 'other', provider: 'ollama' }, KEY, 'another provider, the same baseUrl'],
      [{ baseUrl: 'https://models.example.com:8000/v1' }, null, 'another scheme'],
      [{ baseUrl: 'http://models.example.com:8001/v1' }, null, 'another port'],
      [{ base_url: 'https://collector.example.net/v1' }, null, 'another host (other spelling)'],
      [{ baseUrl: null }, null, "the operator's server for the provider"],
      [{ baseUrl: 'https://collector.example.net/v1', apiKey: NEW_KEY }, NEW_KEY, 'a key sent with the new URL'],
      [{ baseUrl: 'https://collector.example.net/v1', api_key: NEW_KEY }, NEW_KEY, 'a key sent with the new URL (other spelling)'],
      [{ baseUrl: 'https://collector.example.net/v1', apiKey: null }, null, 'a key cleared with the new URL'],
    ];
    for (const [body, apiKey, why] of cases) {
      assert.equal(mergeLlm(atModels, change(body)).apiKey, apiKey, why);
    }
  });

  test("without a baseUrl the provider names the server: another provider's default drops the key", () => {
    const cases: Array<[body: object, apiKey: string | null, why: string]> = [
      [{ provider: 'OpenAI' }, KEY, 'the same provider in another case'],
      [{ provider: 'openai-chat' }, KEY, 'another name of the same provider'],
      [{ model: 'gpt-5' }, KEY, 'another model'],
      [{ provider: 'ollama' }, null, "an OpenAI key must not go to the operator's Ollama"],
      [{ provider: 'echo' }, null, 'the built-in model'],
      [{ provider: 'someone-elses' }, null, 'a provider the service does not know'],
      [{ baseUrl: 'https://api.openai.example/v1' }, null, "a baseUrl, even at the operator's URL"],
      [{ provider: 'ollama', apiKey: NEW_KEY }, NEW_KEY, 'a key sent with the move'],
    ];
    for (const [body, apiKey, why] of cases) {
      assert.equal(mergeLlm(stored(), change(body)).apiKey, apiKey, why);
    }
  });

  test('the merged value is a new one: the stored llm is not changed', () => {
    const before = stored();
    mergeLlm(before, change({ provider: 'ollama' }));
    assert.deepEqual(before, stored());
  });
});

describe('the server it points to', () => {
  test("the operator's servers, a user's baseUrl, the built-in model", () => {
    const endpoint = (llm: Partial<Llm>) => llmEndpoint(stored(llm), operator);
    assert.deepEqual(endpoint({}), { endpoint: { baseUrl: operator.openaiBaseUrl, apiKey: KEY, model: 'm', userAimed: false } });
    assert.deepEqual(endpoint({ provider: 'OpenAI-Chat', apiKey: null }), {
      endpoint: { baseUrl: operator.openaiBaseUrl, apiKey: 'sk-operator', model: 'm', userAimed: false },
    });
    assert.deepEqual(endpoint({ provider: 'ollama', apiKey: null }), {
      endpoint: { baseUrl: operator.ollamaBaseUrl, apiKey: 'ollama', model: 'm', userAimed: false },
    });
    assert.deepEqual(
      endpoint({ provider: 'openai', baseUrl: 'https://models.example.com/v1//', apiKey: null }),
      {
        endpoint: { baseUrl: 'https://models.example.com/v1', apiKey: 'none', model: 'm', userAimed: true },
      },
      "a user's server never gets the operator's key",
    );
    assert.deepEqual(endpoint({ provider: 'echo', baseUrl: 'https://models.example.com/v1' }), {
      endpoint: { baseUrl: 'builtin:echo', apiKey: 'none', model: 'm', userAimed: false, builtIn: 'echo' },
    });
    assert.deepEqual(endpoint({ provider: 'openai-compatible' }), {
      problem: {
        path: 'llm.baseUrl',
        message: llmProblem(stored({ provider: 'openai-compatible' }), { allowPrivateNetworks: false })!.message,
      },
    });
    const unknown = endpoint({ provider: 'someone-elses' });
    assert.ok('problem' in unknown && unknown.problem.path === 'llm.provider' && unknown.problem.message.includes('"openai-compatible"'));
  });

  test('the check on save: openai-compatible needs a baseUrl; a literal private address is refused unless allowed', () => {
    const refuse = { allowPrivateNetworks: false };
    assert.equal(llmProblem(stored(), refuse), undefined);
    assert.equal(llmProblem(stored({ provider: 'someone-elses' }), refuse), undefined, 'an unknown provider is kept');
    assert.equal(llmProblem(stored({ provider: 'openai-compatible' }), refuse)?.path, 'llm.baseUrl');
    assert.equal(llmProblem(stored({ baseUrl: 'http://10.0.0.7:8000/v1' }), refuse)?.path, 'llm.baseUrl');
    assert.equal(llmProblem(stored({ baseUrl: 'http://10.0.0.7:8000/v1' }), { allowPrivateNetworks: true }), undefined);
    assert.equal(
      llmProblem(stored({ baseUrl: 'https://models.example.com/v1' }), refuse),
      undefined,
      'a host name is looked up when it runs',
    );
  });
});
