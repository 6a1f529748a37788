import { Worker } from 'node:worker_threads';
import { workerEntry } from '../../threads/worker-entry';
import { parseManifest, type ParsedManifest, type ParseManifestOptions } from './manifest-parsing';

// Parsing a large manifest takes seconds on a busy node (about 3 s for 1 MiB), and the controller
// answers probes and the webhook on the same event loop: texts over `IN_PROCESS_MAX_BYTES` are
// parsed in a worker thread with its own heap limit and a deadline, one at a time. A text that
// exhausts the worker's memory or time is reported as the file's problem; the process lives on.

export const ISOLATED_PARSING_LIMITS = {
  /** Texts up to this size are parsed in-process (a few milliseconds, within the limits). */
  inProcessMaxBytes: 16 * 1024,
  /** Heap of the worker: a parse that needs more is abandoned. */
  workerHeapMb: 256,
  /** Time a parse may take in the worker. */
  workerDeadlineMs: 30_000,
} as const;

function failure(file: string, message: string): ParsedManifest {
  return { objects: [], problems: [{ file, line: 1, message }] };
}

function parseInWorker(
  file: string,
  content: string,
  options: ParseManifestOptions,
): Promise<ParsedManifest> {
  const entry = workerEntry(__dirname, 'manifest-parse-worker');
  const worker = new Worker(entry.script, {
    eval: entry.eval,
    workerData: { file, content, options },
    resourceLimits: { maxOldGenerationSizeMb: ISOLATED_PARSING_LIMITS.workerHeapMb, stackSizeMb: 4 },
  });
  return new Promise<ParsedManifest>((resolve) => {
    let settled = false;
    const settle = (result: ParsedManifest) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      void worker.terminate();
      resolve(result);
    };
    const deadline = setTimeout(
      () =>
        settle(
          failure(
            file,
            `parsing took longer than ${ISOLATED_PARSING_LIMITS.workerDeadlineMs / 1000} s; file skipped`,
          ),
        ),
      ISOLATED_PARSING_LIMITS.workerDeadlineMs,
    );
    worker.once('message', (result: ParsedManifest) => settle(result));
    worker.once('error', (error: Error & { code?: string }) =>
      settle(
        failure(
          file,
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? `parsing needed more than ${ISOLATED_PARSING_LIMITS.workerHeapMb} MB; file skipped`
            : `parsing failed: ${error.message}`,
        ),
      ),
    );
    worker.once('exit', () => settle(failure(file, 'parsing stopped before it finished; file skipped')));
  });
}

let queue: Promise<unknown> = Promise.resolve();

/** `parseManifest` that never blocks the event loop for long: large texts go to a worker, in turn. */
export function parseManifestIsolated(
  file: string,
  content: string,
  options: ParseManifestOptions = {},
): Promise<ParsedManifest> {
  if (Buffer.byteLength(content) <= ISOLATED_PARSING_LIMITS.inProcessMaxBytes)
    return Promise.resolve(parseManifest(file, content, options));
  const parsed = queue.then(() => parseInWorker(file, content, options));
  queue = parsed;
  return parsed;
}
