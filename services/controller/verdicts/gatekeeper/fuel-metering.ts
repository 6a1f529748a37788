import { Worker } from 'node:worker_threads';
import { workerEntry } from '../../../threads/worker-entry';

// Metering a compiled template (wasm-fuel.ts) reads and copies the whole module: linear in its size,
// but a large template's module is megabytes, so it runs in a worker thread, not on the event loop,
// with a heap limit and a time limit of its own (like opa's compile before it). Once per compiled
// template: the engine caches the metered module with the compiled one (rego-engine.ts).

/** Heap of the metering thread: a module is at most a few MiB, and is copied once. */
const METERING_HEAP_MEGABYTES = 64;
/** Metering takes milliseconds per 100 KiB of module; ten seconds is for a very busy machine. */
export const METERING_TIMEOUT_MILLISECONDS = 10_000;

export class FuelMeteringError extends Error {}

/** The module with fuel metering, from a worker thread; rejects with FuelMeteringError. */
export function meterOffLoop(
  wasm: Uint8Array,
  initialFuel: number,
  timeoutMilliseconds = METERING_TIMEOUT_MILLISECONDS,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const entry = workerEntry(__dirname, 'fuel-meter-worker');
    const worker = new Worker(entry.script, {
      eval: entry.eval,
      workerData: { wasm, initialFuel },
      resourceLimits: { maxOldGenerationSizeMb: METERING_HEAP_MEGABYTES, maxYoungGenerationSizeMb: 16 },
    });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      outcome();
    };
    const timer = setTimeout(
      () =>
        settle(() =>
          reject(
            new FuelMeteringError(`metering the module took longer than ${timeoutMilliseconds / 1000} s`),
          ),
        ),
      timeoutMilliseconds,
    );
    worker.on('message', (message: { metered?: Uint8Array; error?: string }) =>
      settle(() =>
        message.metered
          ? resolve(message.metered)
          : reject(new FuelMeteringError(message.error ?? 'the module cannot be metered')),
      ),
    );
    worker.on('error', (error) =>
      settle(() => reject(new FuelMeteringError(`metering the module failed: ${error.message}`))),
    );
    worker.on('exit', () =>
      settle(() => reject(new FuelMeteringError('metering the module ended its thread (its memory limit)'))),
    );
  });
}
