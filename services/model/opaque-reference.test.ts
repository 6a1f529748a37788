import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { generatedReferenceKey, isOpaqueReference, opaqueReference } from './opaque-reference';

describe('opaque references', () => {
  const key = Buffer.from('a per-installation secret of 32 bytes', 'utf8');

  it('are fw- and 16 hex digits, the same for the same key and id', () => {
    const ref = opaqueReference(key, 'kyverno.io/ClusterPolicy//require-requests#validate-requests');
    expect(ref).toMatch(/^fw-[0-9a-f]{16}$/);
    expect(isOpaqueReference(ref)).toBe(true);
    expect(
      opaqueReference(Buffer.from(key), 'kyverno.io/ClusterPolicy//require-requests#validate-requests'),
    ).toBe(ref);
  });

  it('differ between constraints and between installations: a name cannot be confirmed without the key', () => {
    const id = 'kyverno.io/ClusterPolicy//require-requests#validate-requests';
    expect(opaqueReference(key, id)).not.toBe(opaqueReference(key, `${id}x`));
    expect(opaqueReference(key, id)).not.toBe(opaqueReference(generatedReferenceKey(), id));
  });

  it('recognises only the reference form', () => {
    for (const value of ['fw-0123', 'FW-0123456789abcdef', 'fw-0123456789abcdeg', 'redacted', 1, undefined])
      expect(isOpaqueReference(value)).toBe(false);
  });

  it('are the first 64 bits of HMAC-SHA256 of the id, for keys of any length and ids of any text', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        (bytes, id) => {
          const expected = `fw-${createHmac('sha256', bytes).update(id).digest('hex').slice(0, 16)}`;
          // Twice: the second call reuses the key's prepared states.
          expect(opaqueReference(bytes, id)).toBe(expected);
          expect(opaqueReference(bytes, id)).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
