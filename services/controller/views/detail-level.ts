import { detailLevelRank, isDetailLevel, type DetailLevel } from '../../model/api';

export class DetailLevelError extends Error {}

/**
 * The level a request gets: the configured level, or the lowest level the caller asked for. A
 * caller may ask in several places at once (a repeated query parameter, the query and the body):
 * every value counts, so a request that asks for less always gets less. Asking for a higher level
 * is not an error (the response states the level applied) so clients can always ask for `full` and
 * read `detailLevel`. Anything that is not one of the three names (empty, null, an array, an object,
 * a number) is a 400, never silently ignored.
 */
export function resolveDetailLevel(configured: DetailLevel, ...requested: unknown[]): DetailLevel {
  let applied = configured;
  for (const value of requested) {
    if (value === undefined) continue;
    if (!isDetailLevel(value))
      throw new DetailLevelError(
        `detail_level must be summary, detailed or full, not ${describeValue(value)}`,
      );
    if (detailLevelRank(value) < detailLevelRank(applied)) applied = value;
  }
  return applied;
}

/** A short, safe description of what the caller sent (never calls the caller's own toString). */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 100));
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'an array';
  return value === null ? 'null' : `a value of type ${typeof value}`;
}
