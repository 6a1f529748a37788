import { celEnv, isCelError, isCelList, isCelMap, parse, plan, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { isRecord } from '../../../model/kubernetes';
import { KUBERNETES_CEL_FUNCTIONS } from './kubernetes-extensions';
import { LINEAR_STRING_FUNCTIONS } from './linear-strings';
import { NETWORK_CEL_FUNCTIONS } from './network-extensions';

// Compiling and running CEL for admission policies with @bufbuild/cel (docs/decisions.md). JSON
// from Kubernetes objects becomes CEL input once per object: whole numbers are CEL ints (bigint),
// as the API server's schema-typed values are for integer fields.

const environment = celEnv({
  funcs: [...strings, ...LINEAR_STRING_FUNCTIONS, ...KUBERNETES_CEL_FUNCTIONS, ...NETWORK_CEL_FUNCTIONS],
});

export type CelProgram = (bindings: Record<string, unknown>) => CelOutcome;

export type CelOutcome =
  | { ok: true; value: unknown }
  /** `unsupported`: a function or feature this implementation lacks, not a failure of the object. */
  | { ok: false; message: string; unsupported: boolean };

const UNSUPPORTED = /unbound function|unsupported|not implemented|no such overload|unknown (function|macro)/i;

/** Compiles once; a syntax error gives a program that always answers the error. */
export function compileCel(expression: string): CelProgram {
  let planned: ReturnType<typeof plan>;
  try {
    planned = plan(environment, parse(expression));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return () => ({ ok: false, message: `does not compile: ${message}`, unsupported: true });
  }
  return (bindings) => {
    try {
      const result = planned(bindings as never);
      if (isCelError(result))
        return { ok: false, message: result.message, unsupported: UNSUPPORTED.test(result.message) };
      return { ok: true, value: fromCel(result) };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ok: false, message, unsupported: UNSUPPORTED.test(message) };
    }
  };
}

// The admitted object is converted once however many policies read it.
const convertedObjects = new WeakMap<object, unknown>();

/** An object as CEL input, converted once per object (the admitted object, params). */
export function objectAsCelInput(object: object): unknown {
  const cached = convertedObjects.get(object);
  if (cached !== undefined) return cached;
  const converted = toCelInput(object);
  convertedObjects.set(object, converted);
  return converted;
}

/** JSON (numbers as doubles) → CEL input (whole numbers as ints). */
export function toCelInput(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCelInput);
  if (isRecord(value)) {
    const converted: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) converted[key] = toCelInput(item);
    return converted;
  }
  return value;
}

/** CEL results → plain JavaScript (lists as arrays, maps as objects). */
function fromCel(value: CelValue): unknown {
  if (isCelList(value)) return [...value].map(fromCel);
  if (isCelMap(value)) {
    const result: Record<string, unknown> = {};
    for (const [key, item] of value) result[String(key)] = fromCel(item);
    return result;
  }
  return value;
}
