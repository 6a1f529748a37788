import { loadPolicySync, type LoadedPolicy } from '@open-policy-agent/opa-wasm';
import { EvaluationAborted } from '../guard/evaluation-guard';
import { MAX_RESULT_LENGTH } from '../guard/isolate-protocol';
import {
  BOUNDED_CUSTOM_BUILTINS,
  HostFuelSpent,
  installBoundedSdkBuiltins,
  withHostFuel,
} from './bounded-host-builtins';
import { FUEL_EXPORT } from './wasm-fuel';
import { errorMessage } from '../../../model/error-message';

// Rego on the event loop (docs/decisions.md "Rego on the event loop, bounded by fuel"): each
// compiled template's module is metered (wasm-fuel.ts), so a call stops by itself once it has spent
// the fuel it was given: the global is set before the call and read after it, and a trap with the
// global below zero is the spent budget. Fuel depends on the input alone: a stop is the same for
// the same object, template and budget, whatever the machine's load.
// The SDK (@open-policy-agent/opa-wasm) instantiates the module and holds its memory; the call
// itself is made here (its ABI 1.2 path, as the SDK's evaluate makes it) so that the result's
// length is read before it is parsed. An instance that trapped, threw or grew its memory past
// KEPT_MEMORY_BYTES is dropped and made again at its next use (a millisecond): no state of an
// interrupted call survives, and a large object's memory is given back.

/** Wasm memory of one policy: 320 KiB to start, 64 MiB at most (a huge object fails, not the process). */
export const REGO_MEMORY = { initial: 5, maximum: 1024 };

/**
 * A compiled WebAssembly.Module (the project's TypeScript libraries have no WebAssembly namespace).
 */
export type WasmModule = object;

/** One evaluation's outcome: its violation messages, or why there are none. */
export type RegoReply =
  { messages: string[] } | { error: string } | { notViolations: true } | { tooLarge: true };

/** Fuel the SDK's loading calls may spend (parsing `{}`, listing entrypoints): the metered module's start value. */
export const LOADING_FUEL = 50_000_000;
/**
 * Memory an evaluation may leave grown in its instance (beyond what its inventory took); past it,
 * the instance is made again at its next use (memory is at most 64 MiB while evaluating).
 */
const KEPT_MEMORY_BYTES = 16 * 1024 * 1024;
/**
 * Fuel loading Gatekeeper's synced data (the cluster's Namespaces) into an instance may spend, once
 * per change of it, besides the evaluation's: 200,000,000 units (at most 20 ms, docs/benchmarks.md)
 * load about 8,000 Namespaces with their labels (10,000 took 240,000,000 units, 23 ms).
 */
export const INVENTORY_FUEL = 200_000_000;
const PAGE_BYTES = 64 * 1024;

/** `spent`: the evaluation spent its budget; `inventory-spent`: loading the synced data spent INVENTORY_FUEL. */
export type FueledReply = RegoReply | 'spent' | 'inventory-spent';

export interface FueledEvaluation {
  reply: FueledReply;
  /** Fuel units spent (all of it when the budget was spent). */
  used: number;
}

interface Instance {
  loaded: LoadedPolicy;
  fuel: { value: number };
  entrypoint: number;
  inventoryKey?: string;
  /** Memory once made and its inventory loaded: what the evaluations' growth is measured from. */
  baseBytes: number;
}

interface OpaExports {
  opa_eval(
    reserved: number,
    entrypoint: number,
    data: number,
    input: number,
    inputLength: number,
    heap: number,
    format: number,
  ): number;
}

const decoder = new TextDecoder();

/** Gatekeeper's violation messages from OPA's result set; undefined when it is not one. */
export function messagesOf(resultSet: unknown): string[] | undefined {
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

export class FueledRegoPolicies {
  private readonly modules = new Map<string, { module: WasmModule; entrypoint: string }>();
  private readonly instances = new Map<string, Instance>();
  /** Instances made (metrics, tests: an instance that trapped is made again). */
  instantiations = 0;

  constructor() {
    installBoundedSdkBuiltins();
  }

  load(policy: string, module: WasmModule, entrypoint: string): void {
    this.modules.set(policy, { module, entrypoint });
    this.instances.delete(policy);
  }

  forget(policy: string): void {
    this.modules.delete(policy);
    this.instances.delete(policy);
  }

  has(policy: string): boolean {
    return this.modules.has(policy);
  }

  private instance(policy: string): Instance | string {
    const known = this.instances.get(policy);
    if (known) return known;
    const source = this.modules.get(policy);
    if (!source) return 'the compiled template is not loaded';
    this.instantiations++;
    const loaded = loadPolicySync(
      source.module as Parameters<typeof loadPolicySync>[0],
      { ...REGO_MEMORY },
      { ...BOUNDED_CUSTOM_BUILTINS },
    );
    const wasmExports = (loaded.wasmInstance as { exports: Record<string, unknown> }).exports;
    const fuel = wasmExports[FUEL_EXPORT] as { value: number } | undefined;
    if (!fuel) return 'the compiled template is not metered';
    if (!(Number(loaded.minorVersion) >= 2))
      return `opa's Wasm ABI 1.${String(loaded.minorVersion)} is older than 1.2`;
    const entrypoints = loaded.entrypoints as Record<string, number>;
    if (!Object.hasOwn(entrypoints, source.entrypoint))
      return `the compiled template has no entrypoint ${source.entrypoint}`;
    const made: Instance = {
      loaded,
      fuel,
      entrypoint: entrypoints[source.entrypoint],
      baseBytes: loaded.mem.buffer.byteLength,
    };
    this.instances.set(policy, made);
    return made;
  }

  /**
   * Evaluates the policy's violation rule with `input` (JSON as UTF-8, in parts written side by
   * side) and at most `budget` fuel
   * units (at most 2^30); `inventory`: Gatekeeper's data for referential templates, loaded when
   * its key changed (with INVENTORY_FUEL of its own). A guard's deadline reached inside a host built-in is
   * thrown on (EvaluationAborted), after the instance is dropped.
   */
  evaluate(
    policy: string,
    input: readonly Uint8Array[],
    budget: number,
    inventory?: { key: string; data: unknown },
  ): FueledEvaluation {
    let instance: Instance | string;
    try {
      instance = this.instance(policy);
    } catch (error) {
      return { reply: { error: `the compiled template cannot be loaded: ${errorMessage(error)}` }, used: 0 };
    }
    if (typeof instance === 'string') return { reply: { error: instance }, used: 0 };
    if (inventory && instance.inventoryKey !== inventory.key) {
      const failed = this.loadInventory(policy, instance, inventory);
      if (failed) return { reply: failed, used: 0 };
    }
    const { loaded, fuel } = instance;
    fuel.value = budget;
    let result: number;
    try {
      result = withHostFuel(fuel, () => {
        const memory = loaded.mem as unknown as { buffer: ArrayBuffer; grow(pages: number): number };
        const inputAddress = Number(loaded.dataHeapPtr);
        const inputLength = input.reduce((total, part) => total + part.byteLength, 0);
        const missing = inputAddress + inputLength - memory.buffer.byteLength;
        if (missing > 0) memory.grow(Math.ceil(missing / PAGE_BYTES));
        const view = new Uint8Array(memory.buffer);
        let at = inputAddress;
        for (const part of input) {
          view.set(part, at);
          at += part.byteLength;
        }
        const wasmExports = (loaded.wasmInstance as { exports: OpaExports }).exports;
        return wasmExports.opa_eval(
          0,
          instance.entrypoint,
          loaded.dataAddr,
          inputAddress,
          inputLength,
          inputAddress + inputLength,
          0,
        );
      });
    } catch (error) {
      this.instances.delete(policy);
      if (error instanceof EvaluationAborted) throw error;
      if (fuel.value < 0 || error instanceof HostFuelSpent) return { reply: 'spent', used: budget };
      const used = budget - fuel.value;
      if (error instanceof RangeError && /call stack/i.test(error.message))
        return { reply: { error: 'the evaluation nested deeper than its stack allows' }, used };
      if (error instanceof RangeError)
        return {
          reply: { error: `the evaluation needs more than the 64 MiB of memory a template may use` },
          used,
        };
      return { reply: { error: errorMessage(error) }, used };
    }
    const used = budget - fuel.value;
    const bytes = new Uint8Array(loaded.mem.buffer);
    const end = bytes.indexOf(0, result);
    const reply = this.replyOf(bytes, result, end);
    if (loaded.mem.buffer.byteLength > instance.baseBytes + KEPT_MEMORY_BYTES) this.instances.delete(policy);
    return { reply, used };
  }

  /** Loads the synced data into the instance with INVENTORY_FUEL; the reply when it cannot. */
  private loadInventory(
    policy: string,
    instance: Instance,
    inventory: { key: string; data: unknown },
  ): FueledReply | undefined {
    const { loaded, fuel } = instance;
    fuel.value = INVENTORY_FUEL;
    instance.inventoryKey = undefined;
    try {
      withHostFuel(fuel, () => loaded.setData(inventory.data as object));
    } catch (error) {
      this.instances.delete(policy);
      if (error instanceof EvaluationAborted) throw error;
      if (fuel.value < 0) return 'inventory-spent';
      return { error: `Gatekeeper's synced data cannot be loaded: ${errorMessage(error)}` };
    }
    instance.inventoryKey = inventory.key;
    instance.baseBytes = loaded.mem.buffer.byteLength;
    return undefined;
  }

  private replyOf(bytes: Uint8Array, start: number, end: number): RegoReply {
    if (end === -1) return { error: "OPA's result is not terminated" };
    if (end - start > MAX_RESULT_LENGTH) return { tooLarge: true };
    let resultSet: unknown;
    try {
      resultSet = JSON.parse(decoder.decode(bytes.subarray(start, end)));
    } catch (error) {
      return { error: `OPA's result is not JSON: ${errorMessage(error)}` };
    }
    const messages = messagesOf(resultSet);
    return messages ? { messages } : { notViolations: true };
  }
}
