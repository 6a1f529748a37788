/**
 * The table's own entry for a key read from a manifest or a request, or undefined. Indexing a
 * plain object literal with such text answers `constructor`, `valueOf` or `__proto__` with
 * Object.prototype's members, which then reach code that expects the table's values.
 */
export function ownEntry<Value>(table: Readonly<Record<string, Value>>, key: string): Value | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
