import { detailLevelRank, isDetailLevel, type DetailLevel } from '../../model/api';

export class DetailLevelError extends Error {}

/**
 * The level a request gets: the configured level, or a lower one the caller asked for. Asking for
 * a higher level is not an error (the response states the level applied) so clients can always ask
 * for `full` and read `detailLevel`.
 */
export function resolveDetailLevel(configured: DetailLevel, requested: unknown): DetailLevel {
  if (requested === undefined || requested === null || requested === '') return configured;
  if (!isDetailLevel(requested))
    throw new DetailLevelError(
      `detail_level must be summary, detailed or full, not ${JSON.stringify(requested)}`,
    );
  return detailLevelRank(requested) < detailLevelRank(configured) ? requested : configured;
}
