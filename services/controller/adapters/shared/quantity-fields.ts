import { AdapterParseError } from '../../../model/constraint';
import { isRecord } from '../../../model/kubernetes';
import { parseQuantity, QuantityError, type Quantity } from '../../../model/quantity';

// Readers for maps of resource name → quantity (ResourceQuota `spec.hard`/`status.used`, LimitRange
// `default`/`min`/`max`). Kept apart from object-fields.ts because only the limit adapters need them.

export interface NamedQuantity {
  /** The resource name exactly as written in the object (`requests.cpu`, `count/configmaps`). */
  resource: string;
  /** The quantity as written in the object; YAML may hand numbers over, kept as their decimal text. */
  written: string;
  quantity: Quantity;
}

/** One quantity; numbers are accepted because YAML manifests write `pods: 10` unquoted. */
export function readQuantity(value: unknown, where: string): { written: string; quantity: Quantity } {
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new AdapterParseError(
      `${where} must be a quantity string, got ${JSON.stringify(value) ?? 'nothing'}`,
    );
  const written = String(value);
  let quantity: Quantity;
  try {
    quantity = parseQuantity(written);
  } catch (error) {
    if (error instanceof QuantityError) throw new AdapterParseError(`${where}: ${error.message}`);
    throw error;
  }
  // Kubernetes rejects negative limits and usage; one here means the object is not what it claims.
  if (quantity.numerator < 0n) throw new AdapterParseError(`${where} must not be negative, got ${written}`);
  return { written, quantity };
}

/**
 * A resource → quantity map, sorted by resource name so the output does not depend on the key order
 * of whoever serialised the object. Absent → [].
 */
export function readQuantityMap(value: unknown, where: string): NamedQuantity[] {
  if (value === undefined || value === null) return [];
  if (!isRecord(value)) throw new AdapterParseError(`${where} must map resource names to quantities`);
  return Object.keys(value)
    .sort()
    .map((resource) => ({ resource, ...readQuantity(value[resource], `${where}.${resource}`) }));
}
