import { createHmac, randomBytes } from 'node:crypto';

// A constraint whose name is redacted still needs a handle: a developer must tell four "redacted"
// ClusterPolicy rows apart and quote one to the platform team (DESIGN.md 7b). The handle is a keyed
// hash (HMAC-SHA256) of the constraint's index id with a per-installation secret: stable for as long
// as the key is, and no name can be confirmed by hashing guesses without the key.

/** `fw-` and 16 hex digits (64 bits of the HMAC): short enough to read out, unique within any index. */
export const OPAQUE_REFERENCE = /^fw-[0-9a-f]{16}$/;

/** Bytes of a generated key; the HMAC key may be longer. */
const GENERATED_KEY_BYTES = 32;

export function isOpaqueReference(value: unknown): value is string {
  return typeof value === 'string' && OPAQUE_REFERENCE.test(value);
}

/** The opaque reference of a constraint id under `key`. */
export function opaqueReference(key: Uint8Array, constraintId: string): string {
  return `fw-${createHmac('sha256', key).update(constraintId).digest('hex').slice(0, 16)}`;
}

/** A fresh random key: references stay stable only while the process that made it runs. */
export function generatedReferenceKey(): Uint8Array {
  return randomBytes(GENERATED_KEY_BYTES);
}
