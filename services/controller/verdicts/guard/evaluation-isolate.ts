import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { workerEntry } from '../../../threads/worker-entry';
import { activeGuard } from './evaluation-guard';
import {
  ISOLATE_HEAP_MEGABYTES,
  SIGNAL_DONE,
  SIGNAL_SLOTS,
  SIGNAL_STARTED,
  SIGNAL_THREAD_ID,
  SIGNAL_WAKE,
  type IsolateReply,
  type IsolateRequest,
} from './isolate-protocol';
import { threadRunQueueWaitMilliseconds } from './thread-run-queue';

// The evaluator that cannot stop itself runs in a worker thread, the evaluation isolate
// (docs/decisions.md "Isolated evaluators"): JMESPath beyond plain paths (no checkpoint inside the
// interpreter). (Rego compiled to Wasm ran here too; it is now metered and runs on the event loop:
// docs/decisions.md "Rego on the event loop, bounded by fuel".) The controller's evaluation stays
// synchronous: it posts the request and blocks on a shared flag (Atomics.wait) for at most the wall
// time its guard has left, then reads the reply with receiveMessageOnPort. An isolate that does not
// answer in time is terminated and a fresh one started. Its heap is limited, so an exploding value
// ends the isolate, not the controller; the values that come back are plain data, refused there
// when their JSON would pass isolate-protocol's limit. A second isolate stands by, started, and
// takes over the moment one is replaced: the next object does not wait for an isolate to start
// (about 50 ms).

/** The longest one call may block the event loop, whatever the guard allows. */
const CALL_CAP_MILLISECONDS = 50;
/**
 * A call not answered by then reads how long the isolate waits for a CPU from there on (a fast call
 * reads nothing), and the time the isolate spent waiting for a CPU is added to the call's wait, up to
 * this much: on a busy machine the isolate is runnable but not running, and that time is the
 * machine's, not the expression's (the guard leaves it out, as it does the loop's own wait for a CPU).
 */
const FIRST_LOOK_MILLISECONDS = 5;
const MACHINE_WAIT_CAP_MILLISECONDS = 50;

/** Milliseconds the event loop has been blocked on an isolate that was waiting for a CPU (tests). */
let blockedOnWaitingIsolate = 0;
export function blockedOnWaitingIsolateMilliseconds(): number {
  return blockedOnWaitingIsolate;
}
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
}

type Request = IsolateRequest extends infer Each
  ? Each extends { id: number }
    ? Omit<Each, 'id'>
    : never
  : never;

export class EvaluationIsolate {
  private running: Running | undefined;
  private standby: Running | undefined;
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
    send(running, { ...request, id } as IsolateRequest);
    let outcome = Atomics.wait(running.signal, SIGNAL_DONE, 0, Math.min(wait, FIRST_LOOK_MILLISECONDS));
    if (outcome === 'timed-out' && wait > FIRST_LOOK_MILLISECONDS)
      outcome = this.waitLonger(running, wait - FIRST_LOOK_MILLISECONDS);
    const finished = outcome !== 'timed-out' || Atomics.load(running.signal, SIGNAL_DONE) === 1;
    const replies = this.receive(running, id);
    if (finished) {
      running.started = this.everStarted = true;
      return { replies, finished };
    }
    this.replace(running);
    return { replies, finished };
  }

  /**
   * Waits the rest of a call's time, then as long again as the isolate waited for a CPU meanwhile
   * (up to MACHINE_WAIT_CAP_MILLISECONDS). The time the isolate waited for a CPU while the loop was
   * blocked on it is not the evaluation's: the guard leaves it out.
   */
  private waitLonger(running: Running, rest: number): 'ok' | 'not-equal' | 'timed-out' {
    const thread = Atomics.load(running.signal, SIGNAL_THREAD_ID);
    const started = performance.now();
    const queuedAtStart = threadRunQueueWaitMilliseconds(thread);
    let outcome = Atomics.wait(running.signal, SIGNAL_DONE, 0, rest);
    if (queuedAtStart === undefined) return outcome;
    let queued = queuedAtStart;
    let allowed = 0;
    while (outcome === 'timed-out' && allowed < MACHINE_WAIT_CAP_MILLISECONDS) {
      const now = threadRunQueueWaitMilliseconds(thread);
      if (now === undefined) break;
      const more = Math.min(now - queued, MACHINE_WAIT_CAP_MILLISECONDS - allowed);
      queued = now;
      if (more < 1) break;
      allowed += more;
      outcome = Atomics.wait(running.signal, SIGNAL_DONE, 0, more);
    }
    const queuedAtEnd = threadRunQueueWaitMilliseconds(thread) ?? queued;
    const machineTime = Math.min(queuedAtEnd - queuedAtStart, performance.now() - started);
    if (machineTime > 0) {
      blockedOnWaitingIsolate += machineTime;
      activeGuard()?.discount(machineTime, 0);
    }
    return outcome;
  }

  /** The replies to call `id`. */
  private receive(running: Running, id: number): IsolateReply[] {
    const replies: IsolateReply[] = [];
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
    const entry = workerEntry(__dirname, 'isolate-worker');
    const worker = new Worker(entry.script, {
      eval: entry.eval,
      workerData: { port: port2, signal: signal.buffer },
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
      started: false,
    };
    const ended = () => {
      if (this.running === running) this.running = undefined;
      if (this.standby === running) this.standby = undefined;
    };
    worker.on('error', ended);
    worker.on('exit', ended);
    return running;
  }
}

/** The process's isolate. */
export const evaluationIsolate = new EvaluationIsolate();
