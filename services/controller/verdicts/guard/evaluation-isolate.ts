import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { workerEntry } from '../../../threads/worker-entry';
import { activeGuard } from './evaluation-guard';
import {
  ISOLATE_HEAP_MEGABYTES,
  SIGNAL_DONE,
  SIGNAL_ITEM,
  SIGNAL_REPLY_ID,
  SIGNAL_REPLY_LENGTH,
  SIGNAL_REQUEST_ID,
  SIGNAL_SHARED_REQUEST,
  SIGNAL_SLOTS,
  SIGNAL_STARTED,
  SIGNAL_WAKE,
  type IsolateReply,
  type IsolateRequest,
  type WasmModule,
} from './isolate-protocol';
import {
  readSharedReplies,
  REPLY_AREA_BYTES,
  REQUEST_AREA_BYTES,
  writeSharedRequest,
} from './shared-channel';

// The evaluators that cannot stop themselves run in one worker thread, the evaluation isolate
// (docs/decisions.md "Isolated evaluators"): Rego compiled to Wasm (`policy.evaluate()` is one
// synchronous call) and JMESPath beyond plain paths (no checkpoint inside the interpreter). The
// controller's evaluation stays synchronous: it writes a Rego request into shared memory
// (shared-channel.ts; anything else, or a request too large, is posted) and blocks on a shared flag
// (Atomics.wait) for at most the wall time its guard has left, then reads the replies there (or
// with receiveMessageOnPort). An isolate that does not answer in time is terminated and a fresh one
// started, with every compiled policy loaded again (the Wasm modules are shared, not recompiled).
// Its heap is limited, so an exploding value ends the isolate, not the controller; the values that
// come back are plain data, refused there when their JSON would pass isolate-protocol's limit.
// One call per admitted object (all its Rego constraints together); docs/benchmarks.md has its cost.
// A second isolate stands by, started and with every policy loaded, and takes over the moment one
// is replaced: the next object does not wait for an isolate to start (about 50 ms).

/** The longest one call may block the event loop, whatever the guard allows. */
const CALL_CAP_MILLISECONDS = 50;
/**
 * How long a call may wait for the process's first isolate to start (the controller starts it at
 * its own start, so no admission waits for it; one-shot checks and tests may reach it first, and
 * under the test toolchain its sources are compiled on start, which takes seconds on a busy
 * machine). An isolate that replaces another is waited for only within the guard's time.
 */
const FIRST_START_WAIT_MILLISECONDS = 20_000;

interface Running {
  worker: Worker;
  port: MessagePort;
  signal: Int32Array;
  /** Shared memory of Rego requests and their replies (shared-channel.ts). */
  requestArea: Uint8Array;
  replyArea: Uint8Array;
  /** The inventory key each policy was last sent with: an unchanged inventory is not sent again. */
  inventories: Map<string, string>;
  /** Set by the isolate's first answer: the isolate has loaded its code. */
  started: boolean;
}

/** Posts a message to the isolate and wakes it (it waits on SIGNAL_WAKE, not in its event loop). */
function send(running: Running, message: IsolateRequest): void {
  running.port.postMessage(message);
  wake(running);
}

function wake(running: Running): void {
  Atomics.store(running.signal, SIGNAL_WAKE, 1);
  Atomics.notify(running.signal, SIGNAL_WAKE);
}

/**
 * The call's replies, and whether the isolate finished it in time; `starting`: no isolate had
 * started yet (one replaced a moment ago), so nothing was evaluated and nothing waited.
 */
export interface IsolateCall {
  replies: IsolateReply[];
  finished: boolean;
  starting?: boolean;
  /** The Rego item the isolate was evaluating when the call ran out of time. */
  itemInProgress?: number;
}

type Request = IsolateRequest extends infer Each
  ? Each extends { id: number }
    ? Omit<Each, 'id'>
    : never
  : never;

export class EvaluationIsolate {
  private running: Running | undefined;
  private standby: Running | undefined;
  private readonly policies = new Map<string, { module: WasmModule; entrypoint: string }>();
  private nextId = 0;
  private everStarted = false;
  /** Isolates replaced because a call ran out of time (metrics, tests). */
  replacements = 0;

  /**
   * `standby`: keep a second isolate started, to take over at once when one is replaced.
   * `waitForFirstStart`: the first call may wait for the isolate to start (the process's main
   * isolate, for one-shot checks and tests); otherwise a call that finds it starting evaluates nothing.
   */
  constructor(
    private readonly withStandby = true,
    waitForFirstStart = true,
  ) {
    this.everStarted = !waitForFirstStart;
  }

  /** Whether a policy is loaded (into this isolate and those replacing it). */
  hasPolicy(policy: string): boolean {
    return this.policies.has(policy);
  }

  /** Loads a policy another isolate holds into this one. */
  loadFrom(other: EvaluationIsolate, policy: string): void {
    const known = other.policies.get(policy);
    if (known && !this.policies.has(policy)) this.load(policy, known.module, known.entrypoint);
  }

  /** Loads a compiled policy into the isolate (and into every isolate that replaces it). */
  load(policy: string, module: WasmModule, entrypoint: string): void {
    this.policies.set(policy, { module, entrypoint });
    const message = { kind: 'load', policy, module, entrypoint } satisfies IsolateRequest;
    send(this.isolate(), message);
    if (this.standby) send(this.standby, message);
  }

  /** Forgets a compiled policy (dropped from the engine's cache); a fresh isolate will not load it. */
  forget(policy: string): void {
    this.policies.delete(policy);
  }

  /**
   * Sends one request and waits for it at most `waitMilliseconds` (capped at 50 ms once the
   * isolate has started). Past that the isolate is replaced, and the replies so far are returned.
   */
  call(request: Request, waitMilliseconds: number): IsolateCall {
    if (!this.everStarted) this.awaitFirstStart();
    const running = this.isolate();
    // An isolate that replaced one a moment ago may still be loading its code: it is waited for
    // within the same time, and when it has not started by then, nothing is evaluated.
    let wait = Math.min(waitMilliseconds, CALL_CAP_MILLISECONDS);
    if (Atomics.load(running.signal, SIGNAL_STARTED) === 0) {
      const before = performance.now();
      Atomics.wait(running.signal, SIGNAL_STARTED, 0, wait);
      if (Atomics.load(running.signal, SIGNAL_STARTED) === 0)
        return { replies: [], finished: false, starting: true };
      wait = Math.max(1, wait - (performance.now() - before));
    }
    const id = ++this.nextId;
    Atomics.store(running.signal, SIGNAL_DONE, 0);
    Atomics.store(running.signal, SIGNAL_ITEM, 0);
    const shared = request.kind === 'rego' && this.sendShared(running, request, id);
    if (!shared) {
      // The isolate sets the inventories such a message carries itself.
      if (request.kind === 'rego') for (const { policy } of request.items) running.inventories.delete(policy);
      send(running, { ...request, id } as IsolateRequest);
    }
    const outcome = Atomics.wait(running.signal, SIGNAL_DONE, 0, wait);
    const finished = outcome !== 'timed-out' || Atomics.load(running.signal, SIGNAL_DONE) === 1;
    const replies = this.receive(running, id, shared && finished);
    if (finished) {
      running.started = this.everStarted = true;
      return { replies, finished };
    }
    const begun = Atomics.load(running.signal, SIGNAL_ITEM);
    // Not begun: the isolate is still busy with what came before (a replacement loading its
    // policies). Nothing of this call ran late, and replacing the isolate again would only start the
    // loading anew: the call is answered as one that found the isolate starting. A shared request is
    // taken back first, so that the isolate never reads the area while the next call writes it.
    const takenBack = !shared || Atomics.compareExchange(running.signal, SIGNAL_SHARED_REQUEST, 1, 0) === 1;
    if (begun === 0 && request.kind === 'rego' && takenBack)
      return { replies, finished: false, starting: true };
    this.replace(running);
    return { replies, finished, itemInProgress: Math.max(0, begun - 1) };
  }

  /**
   * Writes a Rego request into the isolate's shared request area and wakes it; false when it does
   * not fit there (it goes by message). Inventories the isolate lacks go ahead by message.
   */
  private sendShared(running: Running, request: Request & { kind: 'rego' }, id: number): boolean {
    if (!writeSharedRequest(running.requestArea, request.review, request.items)) return false;
    for (const { policy, inventory } of request.items)
      if (inventory && running.inventories.get(policy) !== inventory.key) {
        running.port.postMessage({
          kind: 'inventory',
          policy,
          key: inventory.key,
          data: inventory.data,
        } satisfies IsolateRequest);
        running.inventories.set(policy, inventory.key);
      }
    Atomics.store(running.signal, SIGNAL_REQUEST_ID, id);
    Atomics.store(running.signal, SIGNAL_SHARED_REQUEST, 1);
    wake(running);
    return true;
  }

  /** The replies to call `id`: from the reply area when a shared request finished there, and by message. */
  private receive(running: Running, id: number, sharedFinished: boolean): IsolateReply[] {
    const replies: IsolateReply[] = [];
    if (sharedFinished && Atomics.load(running.signal, SIGNAL_REPLY_ID) === id) {
      const length = Atomics.load(running.signal, SIGNAL_REPLY_LENGTH);
      if (length >= 0) return [{ kind: 'rego', id, replies: readSharedReplies(running.replyArea, length) }];
    }
    for (
      let received = receiveMessageOnPort(running.port);
      received;
      received = receiveMessageOnPort(running.port)
    ) {
      const reply = received.message as IsolateReply;
      if (reply.id === id) replies.push(reply);
    }
    return replies;
  }

  /**
   * Blocks until the process's first isolate runs: the start is not the evaluation's cost, so the
   * active guard does not count it.
   */
  private awaitFirstStart(): void {
    const wallBefore = performance.now();
    const cpuBefore = process.cpuUsage();
    const running = this.isolate();
    const id = ++this.nextId;
    Atomics.store(running.signal, SIGNAL_DONE, 0);
    send(running, { kind: 'jmespath', id, expression: '`0`', data: null });
    Atomics.wait(running.signal, SIGNAL_DONE, 0, FIRST_START_WAIT_MILLISECONDS);
    while (receiveMessageOnPort(running.port));
    running.started = this.everStarted = true;
    const cpu = process.cpuUsage(cpuBefore);
    activeGuard()?.discount(performance.now() - wallBefore, (cpu.user + cpu.system) / 1000);
  }

  /** Resolves once the isolate runs (tests and one-shot checks call it before timing anything). */
  async started(): Promise<void> {
    const running = this.isolate();
    if (running.started) return;
    const id = ++this.nextId;
    Atomics.store(running.signal, SIGNAL_DONE, 0);
    send(running, { kind: 'jmespath', id, expression: '`0`', data: null });
    while (Atomics.load(running.signal, SIGNAL_DONE) === 0 && this.running === running)
      await new Promise((resolve) => setTimeout(resolve, 10));
    while (receiveMessageOnPort(running.port));
    running.started = this.everStarted = true;
  }

  /** Ends the isolate (the process's exit ends it too; tests call this). */
  async stop(): Promise<void> {
    const stopping = [this.running, this.standby];
    this.running = this.standby = undefined;
    for (const isolate of stopping) if (isolate) await isolate.worker.terminate();
  }

  private replace(running: Running): void {
    if (this.running === running) this.running = undefined;
    this.replacements++;
    void running.worker.terminate();
    // The standby takes over, and a new standby starts now, to have loaded its code before it is needed.
    if (this.standby && Atomics.load(this.standby.signal, SIGNAL_STARTED) === 1) {
      this.running = this.standby;
      this.running.started = true;
      this.standby = undefined;
    }
    this.isolate();
  }

  private isolate(): Running {
    if (this.running) {
      if (this.withStandby) this.standby ??= this.startIsolate();
      return this.running;
    }
    this.running = this.standby ?? this.startIsolate();
    this.standby = undefined;
    return this.running;
  }

  private startIsolate(): Running {
    const { port1, port2 } = new MessageChannel();
    const signal = new Int32Array(new SharedArrayBuffer(SIGNAL_SLOTS * Int32Array.BYTES_PER_ELEMENT));
    const requestArea = new Uint8Array(new SharedArrayBuffer(REQUEST_AREA_BYTES));
    const replyArea = new Uint8Array(new SharedArrayBuffer(REPLY_AREA_BYTES));
    const entry = workerEntry(__dirname, 'isolate-worker');
    const worker = new Worker(entry.script, {
      eval: entry.eval,
      workerData: {
        port: port2,
        signal: signal.buffer,
        requestArea: requestArea.buffer,
        replyArea: replyArea.buffer,
      },
      transferList: [port2],
      resourceLimits: {
        maxOldGenerationSizeMb: ISOLATE_HEAP_MEGABYTES,
        maxYoungGenerationSizeMb: 16,
        stackSizeMb: 4,
      },
    });
    // The isolate never keeps the process alive, and one that fails is replaced at the next call.
    worker.unref();
    const running: Running = {
      worker,
      port: port1,
      signal,
      requestArea,
      replyArea,
      inventories: new Map(),
      started: false,
    };
    const ended = () => {
      if (this.running === running) this.running = undefined;
      if (this.standby === running) this.standby = undefined;
    };
    worker.on('error', ended);
    worker.on('exit', ended);
    for (const [policy, { module, entrypoint }] of this.policies)
      port1.postMessage({ kind: 'load', policy, module, entrypoint } satisfies IsolateRequest);
    wake(running);
    return running;
  }
}

/** The process's isolate. */
export const evaluationIsolate = new EvaluationIsolate();

/**
 * The isolate of templates that ran out of an object's time before (gatekeeper/rego-template.ts):
 * one that always runs out stops this isolate, never the one every other template runs in.
 */
export const lateEvaluationIsolate = new EvaluationIsolate(false, false);
