import { parentPort, workerData } from 'node:worker_threads';
import { meterWasmFuel, WasmFuelError } from './wasm-fuel';

// The thread that meters a compiled template (wasm-fuel.ts) off the event loop, with a small heap of
// its own (fuel-metering.ts starts it per module and ends it past its time).

const { wasm, initialFuel } = workerData as { wasm: Uint8Array; initialFuel: number };
try {
  const metered = meterWasmFuel(wasm, initialFuel);
  parentPort?.postMessage({ metered }, [metered.buffer as ArrayBuffer]);
} catch (error) {
  parentPort?.postMessage({
    error: error instanceof WasmFuelError ? error.message : `the module cannot be metered: ${String(error)}`,
  });
}
