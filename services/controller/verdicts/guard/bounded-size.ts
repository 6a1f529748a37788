// How long a value's JSON text would be, counted without printing it and given up past a limit.
// Values an evaluator builds may share parts (JMESPath `[v, v]` makes a list of the same value
// twice): their printed size doubles with each step while the memory they hold does not, so a
// printer (JSON.stringify, a message substitution) on such a value would run for minutes. The
// walk visits each occurrence, so it stops after at most `limit` units of work.

/**
 * The value's JSON length, or undefined when it is over `limit` (the walk stops there). `checkpoint`
 * is called every 64 values (the evaluation guard's, where there is one).
 */
export function jsonLengthWithin(
  value: unknown,
  limit: number,
  checkpoint: () => void = () => undefined,
): number | undefined {
  let length = 0;
  let visited = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    if ((++visited & 63) === 0) checkpoint();
    const item = pending.pop();
    if (typeof item === 'string') length += item.length + 2;
    else if (Array.isArray(item)) {
      length += 2 + item.length;
      if (length > limit) return undefined;
      for (let index = item.length - 1; index >= 0; index--) pending.push(item[index]);
    } else if (item !== null && typeof item === 'object') {
      for (const [key, entry] of Object.entries(item)) {
        length += key.length + 4;
        pending.push(entry);
      }
      length += 2;
    } else length += 8;
    if (length > limit) return undefined;
  }
  return length;
}
