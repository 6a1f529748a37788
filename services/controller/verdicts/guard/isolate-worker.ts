import { workerData, type MessagePort } from 'node:worker_threads';
import { loadPolicySync, type LoadedPolicy } from '@open-policy-agent/opa-wasm';
import { REGO_HOST_BUILTINS } from '../gatekeeper/rego-builtins';
import { installGoSprintf } from '../gatekeeper/rego-sprintf';
import { queryJmesPath } from '../kyverno/kyverno-jmespath';
import { KyvernoRuleError, NotEvaluable } from '../kyverno/kyverno-errors';
import { jsonLengthWithin } from './bounded-size';
import {
  MAX_RESULT_LENGTH,
  REGO_MEMORY,
  SIGNAL_DONE,
  SIGNAL_ITEM,
  SIGNAL_STARTED,
  type IsolateReply,
  type IsolateRequest,
  type RegoItem,
  type RegoReply,
} from './isolate-protocol';

// The evaluation isolate (evaluation-isolate.ts): a worker thread with its own small heap that runs
// the evaluators which cannot stop themselves (Rego compiled to Wasm is one synchronous call; a
// JMESPath expression has no checkpoint inside). The controller waits for it at most the time the
// object's guard has left and replaces it when it does not answer: a looping template or an
// exploding expression costs this thread, never the controller's event loop or heap.

const { port, signal } = workerData as { port: MessagePort; signal: SharedArrayBuffer };
const done = new Int32Array(signal);

const policies = new Map<string, { policy: LoadedPolicy; entrypoint: string; inventoryKey?: string }>();

function post(reply: IsolateReply): void {
  port.postMessage(reply);
}

function finish(): void {
  Atomics.store(done, SIGNAL_DONE, 1);
  Atomics.notify(done, SIGNAL_DONE);
}

function messageOf(error: unknown): string {
  return error !== null &&
    typeof error === 'object' &&
    'message' in error &&
    typeof error.message === 'string'
    ? error.message
    : String(error);
}

/** Gatekeeper's violation messages from OPA's result set; undefined when it is not one. */
function messagesOf(resultSet: unknown): string[] | undefined {
  if (!Array.isArray(resultSet)) return undefined;
  const messages: string[] = [];
  for (const entry of resultSet) {
    if (entry === null || typeof entry !== 'object' || !Array.isArray((entry as { result?: unknown }).result))
      return undefined;
    for (const violation of (entry as { result: unknown[] }).result) {
      if (violation === null || typeof violation !== 'object') continue;
      const message = (violation as { msg?: unknown }).msg;
      messages.push(typeof message === 'string' ? message : JSON.stringify(message ?? ''));
    }
  }
  return messages.sort();
}

function evaluateRego(review: Uint8Array, item: RegoItem): RegoReply {
  const loaded = policies.get(item.policy);
  if (!loaded) return { error: 'the compiled template is not loaded in the evaluation isolate' };
  const input = new Uint8Array(review.byteLength + item.parameters.byteLength);
  input.set(review);
  input.set(item.parameters, review.byteLength);
  let resultSet: unknown;
  try {
    if (item.inventory && loaded.inventoryKey !== item.inventory.key) {
      loaded.policy.setData(item.inventory.data as object);
      loaded.inventoryKey = item.inventory.key;
    }
    resultSet = loaded.policy.evaluate(input.buffer, loaded.entrypoint);
  } catch (error) {
    return { error: messageOf(error) };
  }
  if (jsonLengthWithin(resultSet, MAX_RESULT_LENGTH) === undefined) return { tooLarge: true };
  const messages = messagesOf(resultSet);
  return messages ? { messages } : { notViolations: true };
}

function evaluateJmesPath(id: number, expression: string, data: unknown): IsolateReply {
  try {
    const value = queryJmesPath(expression, data);
    if (jsonLengthWithin(value, MAX_RESULT_LENGTH) === undefined)
      return {
        kind: 'jmespath-error',
        id,
        error: 'too-large',
        message: `the value of ${expression} is larger than the ${MAX_RESULT_LENGTH} characters of JSON a value may have here`,
      };
    return { kind: 'jmespath', id, value };
  } catch (error) {
    const kind = error instanceof NotEvaluable ? 'not-evaluable' : 'rule-error';
    if (!(error instanceof NotEvaluable) && !(error instanceof KyvernoRuleError))
      return { kind: 'jmespath-error', id, error: kind, message: messageOf(error) };
    return { kind: 'jmespath-error', id, error: kind, message: error.message };
  }
}

installGoSprintf();

port.on('message', (request: IsolateRequest) => {
  switch (request.kind) {
    case 'load':
      try {
        policies.set(request.policy, {
          policy: loadPolicySync(
            request.module as Parameters<typeof loadPolicySync>[0],
            { ...REGO_MEMORY },
            { ...REGO_HOST_BUILTINS },
          ),
          entrypoint: request.entrypoint,
        });
      } catch {
        // Evaluating it answers that it is not loaded.
      }
      return;
    case 'rego':
      post({
        kind: 'rego',
        id: request.id,
        replies: request.items.map((item, index) => {
          // One more than the item's index: 0 says the request has not begun (the isolate was busy).
          Atomics.store(done, SIGNAL_ITEM, index + 1);
          return evaluateRego(request.review, item);
        }),
      });
      finish();
      return;
    case 'jmespath':
      post(evaluateJmesPath(request.id, request.expression, request.data));
      finish();
      return;
  }
});

Atomics.store(done, SIGNAL_STARTED, 1);
Atomics.notify(done, SIGNAL_STARTED);
