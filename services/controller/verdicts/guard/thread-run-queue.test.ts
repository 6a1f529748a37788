import { existsSync } from 'node:fs';
import { kernelThreadId, runQueueWaitMilliseconds, threadRunQueueWaitMilliseconds } from './thread-run-queue';

// The run-queue wait of this thread and of another thread of the process (the evaluation isolate's,
// read by the event loop while it waits on it): the same kernel counter, reached two ways.
const linux = existsSync('/proc/thread-self/schedstat');

(linux ? describe : describe.skip)('run-queue wait of a thread', () => {
  it('reads a thread by its kernel id as it reads itself', () => {
    const id = kernelThreadId();
    expect(id).toBeGreaterThan(0);
    const own = runQueueWaitMilliseconds();
    const byId = threadRunQueueWaitMilliseconds(id);
    expect(own).toBeDefined();
    expect(byId).toBeDefined();
    // Read a moment apart: the counter only grows.
    expect(byId as number).toBeGreaterThanOrEqual(own as number);
  });

  it('knows nothing of a thread that is not there', () => {
    expect(threadRunQueueWaitMilliseconds(0)).toBeUndefined();
    expect(threadRunQueueWaitMilliseconds(2 ** 30)).toBeUndefined();
  });
});
