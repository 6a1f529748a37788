import { readFileSync } from 'node:fs';
import type { Logger } from '../logging/logger';

// The projected ServiceAccount token the webhook shows the controller. The kubelet rewrites the
// file before the token expires (at 80% of its lifetime), so it is read again every minute; a
// file that cannot be read leaves the previous token in use (or none: the controller then answers
// redacted, and the admission still gets its warnings, only less detailed).

const REREAD_INTERVAL_MS = 60_000;

export function tokenFileReader(
  path: string,
  logger: Logger,
  clock: () => number = Date.now,
): () => string | undefined {
  let token: string | undefined;
  let readAt = -Infinity;
  return () => {
    const now = clock();
    if (now - readAt < REREAD_INTERVAL_MS) return token;
    readAt = now;
    try {
      token = readFileSync(path, 'utf8').trim() || undefined;
    } catch (failure) {
      logger.warn(
        { err: failure, path },
        'cannot read the controller token file; the controller will answer redacted until it can be read',
      );
    }
    return token;
  };
}
