// What crosses between the controller and its evaluation isolate (evaluation-isolate.ts,
// isolate-worker.ts): plain data only, structured-cloned; compiled Wasm modules are shared, not copied.

/** Wasm memory of one policy: 320 KiB to start, 64 MiB at most (a huge object fails, not the process). */
export const REGO_MEMORY = { initial: 5, maximum: 1024 };

/** Heap of the isolate: an evaluation that needs more ends the isolate, not the controller. */
export const ISOLATE_HEAP_MEGABYTES = 64;

/**
 * Largest value an isolated evaluation may hand back, counted as the JSON text it would print to:
 * about a Kubernetes request (3 MiB) with room to spare. A value the isolate built bigger than that
 * (JMESPath `[v, v]` doubling, a Rego result set of millions) is refused there, not cloned here.
 */
export const MAX_RESULT_LENGTH = 4 * 1024 * 1024;

/**
 * A compiled WebAssembly.Module (the project's TypeScript libraries have no WebAssembly namespace):
 * posted to the isolate, it is shared, not copied.
 */
export type WasmModule = object;

export interface RegoItem {
  /** The compiled policy (the hash of its code). */
  policy: string;
  /** `,"parameters":{...}}` as UTF-8: the end of the input after the shared review. */
  parameters: Uint8Array;
  /** Gatekeeper's `data.inventory`, with its key, for referential templates. */
  inventory?: { key: string; data: unknown };
}

export type IsolateRequest =
  | { kind: 'load'; policy: string; module: WasmModule; entrypoint: string }
  /** Gatekeeper's `data.inventory` for a policy, sent before a shared request that needs it. */
  | { kind: 'inventory'; policy: string; key: string; data: unknown }
  | { kind: 'rego'; id: number; review: Uint8Array; items: RegoItem[] }
  | { kind: 'jmespath'; id: number; expression: string; data: unknown };

/** One Rego item's outcome: its violation messages, or why there are none. */
export type RegoReply =
  { messages: string[] } | { error: string } | { notViolations: true } | { tooLarge: true };

/** Kinds of error a JMESPath evaluation raises, rebuilt as the same classes on the controller's side. */
export type JmesPathErrorKind = 'not-evaluable' | 'rule-error' | 'too-large';

export type IsolateReply =
  | { kind: 'rego'; id: number; replies: RegoReply[] }
  | { kind: 'jmespath'; id: number; value: unknown }
  | { kind: 'jmespath-error'; id: number; error: JmesPathErrorKind; message: string };

/** Index in the shared Int32Array: set to 1 by the isolate when the call's replies are all posted. */
export const SIGNAL_DONE = 0;
/** Index in the shared Int32Array: set to 1 by the isolate once its code is loaded. */
export const SIGNAL_STARTED = 1;
/**
 * Index in the shared Int32Array: one more than the index of the Rego item the isolate is evaluating,
 * 0 while it has not begun the request. The replies come in one message at the end (one message per
 * item cost 5-10 µs each); a call that runs out of time learns from this which item did, or that the
 * isolate never reached it.
 */
export const SIGNAL_ITEM = 2;
/**
 * Index in the shared Int32Array: set to 1 by the controller whenever it has sent something (a
 * message, a shared request); the isolate waits on it and sets it back to 0 before reading.
 */
export const SIGNAL_WAKE = 3;
/**
 * Index in the shared Int32Array: 1 while a shared request (shared-channel.ts) waits in the request
 * area. The isolate claims it (1 to 0) before it begins; a controller that gives up on a request the
 * isolate has not claimed takes it back the same way, so that the area is never read while rewritten.
 */
export const SIGNAL_SHARED_REQUEST = 4;
/** Index in the shared Int32Array: the id of the shared request the reply area answers. */
export const SIGNAL_REPLY_ID = 5;
/** Index in the shared Int32Array: bytes of JSON in the reply area; -1: the replies came by message. */
export const SIGNAL_REPLY_LENGTH = 6;
/** Index in the shared Int32Array: the id of the shared request in the request area. */
export const SIGNAL_REQUEST_ID = 7;
/** Int32 slots of the shared signal array. */
export const SIGNAL_SLOTS = 8;
