import { formatQuantity, type Quantity } from '../../model/quantity';

// Quantities in evidence read as people write them: `800m` CPU, `512Mi` memory.

const BYTE_RESOURCES = /(^|\.)(memory|storage|ephemeral-storage)$|hugepages-/;

export function showQuantity(resource: string, quantity: Quantity): string {
  return formatQuantity(quantity, BYTE_RESOURCES.test(resource) ? 'bytes' : 'plain');
}
