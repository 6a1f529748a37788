import { Writable } from 'node:stream';
import path from 'node:path';
import { parseControllerConfig } from '../../../services/controller/config';
import { startController } from '../../../services/controller/runtime';
import { createLogger } from '../../../services/logging/logger';
import { repositoryRoot } from '../../support/controller-process';

// Issue 33: once ready, the controller answers synthetic admission checks in its namespaces with
// constraints (http/admission-warm-up.ts), and says so in one log line; `--warm-up=false` skips it.

const DEMO = path.join(repositoryRoot, 'examples/manifests');

/** Starts the demo controller with `flags`, waits `waitMs`, stops it and returns its log events. */
async function logEvents(flags: string[], waitMs: number): Promise<Array<Record<string, unknown>>> {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const config = parseControllerConfig(
    ['--manifests', DEMO, '--address', '127.0.0.1', '--port', '0', '--mcp=false', ...flags],
    {},
  );
  const controller = await startController(config, createLogger({ service: 'controller', destination }));
  try {
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline && !lines.some((line) => line.includes('admission_warm_up')))
      await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    await controller.close();
  }
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the admission warm-up at start', () => {
  it('answers checks in the demo namespaces with constraints and logs what it did', async () => {
    // Bounded by the warm-up's own budget (3 s of CPU at half a core), on a busy machine.
    const events = await logEvents([], 60_000);
    const warmUp = events.find((event) => event.event === 'admission_warm_up');
    expect(warmUp).toMatchObject({ level: 'info', msg: 'admission path warmed up' });
    expect(warmUp?.checks).toEqual(expect.any(Number));
    expect(Number(warmUp?.checks)).toBeGreaterThan(0);
    expect(Number(warmUp?.namespaces)).toBeGreaterThanOrEqual(3);
  }, 90_000);

  it('is skipped with --warm-up=false', async () => {
    // About as long as the warm-up takes on the demo (2-6 s measured at load 7): its line would come.
    const events = await logEvents(['--warm-up=false'], 4000);
    expect(events.some((event) => event.msg === 'first sync complete; ready')).toBe(true);
    expect(events.some((event) => event.event === 'admission_warm_up')).toBe(false);
  });
});
