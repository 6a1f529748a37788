import { signedBytes, unsignedBytes } from './wasm-binary';

// The instruction sequences fuel metering (wasm-fuel.ts) inserts.

/** Pages and bytes are charged up to this many (more fails anyway: memory is at most 64 MiB). */
export const DYNAMIC_COUNT_CAP = 2048;

export const GLOBAL_GET = 0x23;
export const GLOBAL_SET = 0x24;
export const LOCAL_TEE = 0x22;
export const LOCAL_GET = 0x20;
export const LOCAL_SET = 0x21;
export const I32_CONST = 0x41;

/** Subtracts what is on the stack from the fuel, and traps when it went below zero. */
function chargeTail(fuel: number, scratch: number): number[] {
  const local = unsignedBytes(scratch);
  return [
    0x6b, // i32.sub
    LOCAL_TEE, // the fuel left, kept in the scratch local rather than read back from the global
    ...local,
    GLOBAL_SET,
    ...unsignedBytes(fuel),
    LOCAL_GET,
    ...local,
    I32_CONST,
    0,
    0x48, // i32.lt_s
    0x04,
    0x40, // if (no result)
    0x00, // unreachable
    0x0b, // end
  ];
}

/** Inside a loop that caches the fuel in the scratch local: the global is written only to trap. */
export function cachedCharge(fuel: number, scratch: number, units: number): number[] {
  const local = unsignedBytes(scratch);
  return [
    LOCAL_GET,
    ...local,
    I32_CONST,
    ...signedBytes(units),
    0x6b, // i32.sub
    LOCAL_TEE,
    ...local,
    I32_CONST,
    0,
    0x48, // i32.lt_s
    0x04,
    0x40, // if (no result)
    LOCAL_GET,
    ...local,
    GLOBAL_SET,
    ...unsignedBytes(fuel),
    0x00, // unreachable
    0x0b, // end
  ];
}

export function staticCharge(fuel: number, scratch: number, units: number): number[] {
  return [GLOBAL_GET, ...unsignedBytes(fuel), I32_CONST, ...signedBytes(units), ...chargeTail(fuel, scratch)];
}

/**
 * Before memory.copy / memory.fill / memory.grow: the count on top of the stack (bytes, pages),
 * kept there, is charged, capped at DYNAMIC_COUNT_CAP (so the charge cannot overflow) and shifted
 * left by `shift` (units per count as a power of two).
 */
export function dynamicCharge(fuel: number, scratch: number, shift: number, cap: number): number[] {
  const local = unsignedBytes(scratch);
  return [
    LOCAL_TEE,
    ...local,
    GLOBAL_GET,
    ...unsignedBytes(fuel),
    // min(count, cap) as unsigned: count < cap ? count : cap
    LOCAL_GET,
    ...local,
    I32_CONST,
    ...signedBytes(cap),
    LOCAL_GET,
    ...local,
    I32_CONST,
    ...signedBytes(cap),
    0x49, // i32.lt_u
    0x1b, // select
    I32_CONST,
    shift,
    0x74, // i32.shl
    ...chargeTail(fuel, scratch),
  ];
}
