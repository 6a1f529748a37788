import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { queryJmesPath } from '../kyverno/kyverno-jmespath';
import { KyvernoRuleError, NotEvaluable } from '../kyverno/kyverno-errors';
import { jsonLengthWithin } from './bounded-size';
import { kernelThreadId } from './thread-run-queue';
import {
  MAX_RESULT_LENGTH,
  SIGNAL_DONE,
  SIGNAL_STARTED,
  SIGNAL_THREAD_ID,
  SIGNAL_WAKE,
  type IsolateReply,
  type IsolateRequest,
} from './isolate-protocol';
import { errorMessage } from '../../../model/error-message';

// The evaluation isolate (evaluation-isolate.ts): a worker thread with its own small heap that runs
// the JMESPath expressions beyond plain paths (no checkpoint inside the interpreter). The controller
// waits for it at most the time the object's guard has left and replaces it when it does not
// answer: an exploding expression costs this thread, never the controller's event loop or heap.
// (Rego ran here too until it was metered: gatekeeper/fueled-rego.ts.)

const { port, signal } = workerData as { port: MessagePort; signal: SharedArrayBuffer };
const done = new Int32Array(signal);

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
      return { kind: 'jmespath-error', id, error: kind, message: errorMessage(error) };
    return { kind: 'jmespath-error', id, error: kind, message: error.message };
  }
}

function answer(request: IsolateRequest): void {
  port.postMessage(evaluateJmesPath(request.id, request.expression, request.data));
  Atomics.store(done, SIGNAL_DONE, 1);
  Atomics.notify(done, SIGNAL_DONE);
}

Atomics.store(done, SIGNAL_THREAD_ID, kernelThreadId());
Atomics.store(done, SIGNAL_STARTED, 1);
Atomics.notify(done, SIGNAL_STARTED);

// The isolate does nothing but answer: it waits on the wake flag, not in its event loop (a message's
// dispatch through the event loop cost more than a small evaluation). terminate() ends the wait.
for (;;) {
  Atomics.wait(done, SIGNAL_WAKE, 0);
  Atomics.store(done, SIGNAL_WAKE, 0);
  for (let received = receiveMessageOnPort(port); received; received = receiveMessageOnPort(port))
    answer(received.message as IsolateRequest);
}
