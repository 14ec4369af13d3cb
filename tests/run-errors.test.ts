// The words the console shows for a failed chat turn: the service's message said once, with no
// lead that claims more than happened.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runErrorText } from '../src/console/app/run-errors.js';

test('an unreachable model server is said to be unreachable, not to have reported an error', () => {
  const message = 'Could not reach the model endpoint 127.0.0.1:9: could not connect to 127.0.0.1:9: connection refused';
  assert.equal(runErrorText({ code: 'upstream_error', message }), message);
  const reported = 'The model endpoint 127.0.0.1:9 answered 500 (Internal Server Error): the model fell over';
  assert.equal(runErrorText({ code: 'upstream_error', message: reported }), reported);
});

test('a refused invoke names each field once, without the generic "Invalid …" before it', () => {
  const details = [{ path: 'llm.baseUrl', message: 'refused: 10.0.0.5 is a private address' }];
  assert.equal(
    runErrorText({ code: 'validation_failed', message: 'Invalid llm.baseUrl.', details }),
    'llm.baseUrl: refused: 10.0.0.5 is a private address',
  );
  assert.equal(runErrorText({ code: 'not_found', message: 'Agent not found.' }), 'Agent not found.');
});

test('a timeout, the step limit and the rate limit keep their lead', () => {
  assert.equal(
    runErrorText({ code: 'upstream_timeout', message: 'The run did not finish within 300 ms (RUN_TIMEOUT_MS).' }),
    'The model did not answer in time. The run did not finish within 300 ms (RUN_TIMEOUT_MS).',
  );
  assert.equal(
    runErrorText({ code: 'max_steps', message: 'Stopped after 8 model calls.' }),
    'The agent used too many steps without answering. Stopped after 8 model calls.',
  );
  assert.equal(
    runErrorText({ code: 'rate_limited', message: 'At most 4 runs at once.', retryAfter: '1' }),
    'Too many runs at once. At most 4 runs at once. Try again in 1 s.',
  );
});
