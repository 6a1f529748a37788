import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
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
  SIGNAL_REPLY_ID,
  SIGNAL_REPLY_LENGTH,
  SIGNAL_REQUEST_ID,
  SIGNAL_SHARED_REQUEST,
  SIGNAL_STARTED,
  SIGNAL_WAKE,
  type IsolateReply,
  type IsolateRequest,
  type RegoItem,
  type RegoReply,
} from './isolate-protocol';
import { readSharedRequest, writeSharedReplies } from './shared-channel';

// The evaluation isolate (evaluation-isolate.ts): a worker thread with its own small heap that runs
// the evaluators which cannot stop themselves (Rego compiled to Wasm is one synchronous call; a
// JMESPath expression has no checkpoint inside). The controller waits for it at most the time the
// object's guard has left and replaces it when it does not answer: a looping template or an
// exploding expression costs this thread, never the controller's event loop or heap.

const { port, signal, requestArea, replyArea } = workerData as {
  port: MessagePort;
  signal: SharedArrayBuffer;
  requestArea: SharedArrayBuffer;
  replyArea: SharedArrayBuffer;
};
const done = new Int32Array(signal);
const requests = new Uint8Array(requestArea);
const replies = new Uint8Array(replyArea);

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

function evaluateRego(policy: string, input: () => Uint8Array, inventory?: RegoItem['inventory']): RegoReply {
  const loaded = policies.get(policy);
  if (!loaded) return { error: 'the compiled template is not loaded in the evaluation isolate' };
  let resultSet: unknown;
  try {
    if (inventory && loaded.inventoryKey !== inventory.key) {
      loaded.policy.setData(inventory.data as object);
      loaded.inventoryKey = inventory.key;
    }
    resultSet = loaded.policy.evaluate(input().buffer, loaded.entrypoint);
  } catch (error) {
    return { error: messageOf(error) };
  }
  if (jsonLengthWithin(resultSet, MAX_RESULT_LENGTH) === undefined) return { tooLarge: true };
  const messages = messagesOf(resultSet);
  return messages ? { messages } : { notViolations: true };
}

function joined(review: Uint8Array, parameters: Uint8Array): Uint8Array {
  const input = new Uint8Array(review.byteLength + parameters.byteLength);
  input.set(review);
  input.set(parameters, review.byteLength);
  return input;
}

/** A request from the shared request area (shared-channel.ts), answered in the reply area. */
function answerSharedRequest(): void {
  const id = Atomics.load(done, SIGNAL_REQUEST_ID);
  const { header, inputOf } = readSharedRequest(requests);
  const answers = header.items.map(({ policy }, index) => {
    // One more than the item's index: 0 says the request has not begun (the isolate was busy).
    Atomics.store(done, SIGNAL_ITEM, index + 1);
    return evaluateRego(policy, () => inputOf(index));
  });
  const length = writeSharedReplies(replies, answers);
  if (length === undefined) post({ kind: 'rego', id, replies: answers });
  Atomics.store(done, SIGNAL_REPLY_LENGTH, length ?? -1);
  Atomics.store(done, SIGNAL_REPLY_ID, id);
  finish();
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

function answer(request: IsolateRequest): void {
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
    case 'inventory': {
      const loaded = policies.get(request.policy);
      if (loaded && loaded.inventoryKey !== request.key) {
        loaded.policy.setData(request.data as object);
        loaded.inventoryKey = request.key;
      }
      return;
    }
    case 'rego':
      post({
        kind: 'rego',
        id: request.id,
        replies: request.items.map((item, index) => {
          // One more than the item's index: 0 says the request has not begun (the isolate was busy).
          Atomics.store(done, SIGNAL_ITEM, index + 1);
          return evaluateRego(item.policy, () => joined(request.review, item.parameters), item.inventory);
        }),
      });
      finish();
      return;
    case 'jmespath':
      post(evaluateJmesPath(request.id, request.expression, request.data));
      finish();
      return;
  }
}

installGoSprintf();

Atomics.store(done, SIGNAL_STARTED, 1);
Atomics.notify(done, SIGNAL_STARTED);

// The isolate does nothing but answer: it waits on the wake flag, not in its event loop (a message's
// dispatch through the event loop cost more than a small evaluation). Messages first (policies,
// inventories, requests too large for the shared area), in the order sent; then the shared request.
// terminate() ends the wait.
for (;;) {
  Atomics.wait(done, SIGNAL_WAKE, 0);
  Atomics.store(done, SIGNAL_WAKE, 0);
  for (let received = receiveMessageOnPort(port); received; received = receiveMessageOnPort(port))
    answer(received.message as IsolateRequest);
  if (Atomics.compareExchange(done, SIGNAL_SHARED_REQUEST, 1, 0) === 1) answerSharedRequest();
}
