/**
 * The message of anything thrown: an Error's message (also one from another realm, a worker or Wasm,
 * which is not `instanceof` this realm's Error), or the value as text (a thrown string).
 */
export function errorMessage(error: unknown): string {
  return error !== null &&
    typeof error === 'object' &&
    'message' in error &&
    typeof error.message === 'string'
    ? error.message
    : String(error);
}
