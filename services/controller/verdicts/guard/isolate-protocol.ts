// What crosses between the controller and its evaluation isolate (evaluation-isolate.ts,
// isolate-worker.ts): plain data only, structured-cloned.

/** Heap of the isolate: an evaluation that needs more ends the isolate, not the controller. */
export const ISOLATE_HEAP_MEGABYTES = 64;

/**
 * Largest value an isolated evaluation may hand back, counted as the JSON text it would print to:
 * about a Kubernetes request (3 MiB) with room to spare. A value the isolate built bigger than that
 * (JMESPath `[v, v]` doubling) is refused there, not cloned here. Rego's result is held to the same
 * limit before it is parsed (gatekeeper/fueled-rego.ts).
 */
export const MAX_RESULT_LENGTH = 4 * 1024 * 1024;

export type IsolateRequest = { kind: 'jmespath'; id: number; expression: string; data: unknown };

/** Kinds of error a JMESPath evaluation raises, rebuilt as the same classes on the controller's side. */
export type JmesPathErrorKind = 'not-evaluable' | 'rule-error' | 'too-large';

export type IsolateReply =
  | { kind: 'jmespath'; id: number; value: unknown }
  | { kind: 'jmespath-error'; id: number; error: JmesPathErrorKind; message: string };

/** Index in the shared Int32Array: set to 1 by the isolate when the call's reply is posted. */
export const SIGNAL_DONE = 0;
/** Index in the shared Int32Array: set to 1 by the isolate once its code is loaded. */
export const SIGNAL_STARTED = 1;
/**
 * Index in the shared Int32Array: set to 1 by the controller whenever it has sent a message; the
 * isolate waits on it and sets it back to 0 before reading.
 */
export const SIGNAL_WAKE = 2;
/**
 * Index in the shared Int32Array: the isolate's kernel thread id (0 where unknown), set before
 * SIGNAL_STARTED, so the controller can read how long the isolate waited for a CPU.
 */
export const SIGNAL_THREAD_ID = 3;
/** Int32 slots of the shared signal array. */
export const SIGNAL_SLOTS = 4;
