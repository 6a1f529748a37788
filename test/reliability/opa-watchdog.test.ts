import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { runOpaWatched } from '../../services/controller/verdicts/gatekeeper/opa-watchdog';

// Issue 32, row 7: an `opa build` child never outlives the controller, and stops at its time limit.
// A stand-in for opa (`sleep`, marked by a unique argument) runs under the watchdog; the process that
// started it is killed with SIGKILL (no exit handler runs), and the stand-in must be gone within
// seconds. Before, two opa children compiled on for 13 minutes after their controller was killed.

jest.setTimeout(60_000);

const SLEEP = '/bin/sleep';

function processesWithArgument(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (
        readFileSync(path.join('/proc', entry, 'cmdline'), 'utf8')
          .split('\0')
          .includes(marker)
      )
        found.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return found;
}

async function until(check: () => boolean, deadlineMs: number): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

describe('opa under its watchdog (issue 32, row 7)', () => {
  it('stops at its time limit and says which limit', async () => {
    const outcome = await runOpaWatched(SLEEP, ['30'], { timeoutMilliseconds: 500, memoryMegabytes: 128 });
    expect(outcome).toMatchObject({ ok: false, limit: 'time' });
  });

  it('ends with its parent, however the parent ends (SIGKILL)', async () => {
    // A unique number of seconds marks the stand-in's command line.
    const marker = String(100_000 + Math.floor(Math.random() * 100_000));
    const watchdog = require.resolve('../../services/controller/verdicts/gatekeeper/opa-watchdog');
    const parent = spawn(
      process.execPath,
      [
        '-e',
        `require(${JSON.stringify(require.resolve('@swc/core'))});
         const swc = require(${JSON.stringify(require.resolve('@swc/core'))});
         require.extensions['.ts'] = (module, filename) => module._compile(swc.transformFileSync(filename, { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }).code, filename);
         require(${JSON.stringify(watchdog)}).runOpaWatched(${JSON.stringify(SLEEP)}, [${JSON.stringify(marker)}], { timeoutMilliseconds: 600000, memoryMegabytes: 128 });
         setInterval(() => {}, 1000);`,
      ],
      { stdio: 'ignore' },
    );
    expect(await until(() => processesWithArgument(marker).length > 0, 30_000)).toBe(true);
    parent.kill('SIGKILL');
    expect(await until(() => processesWithArgument(marker).length === 0, 10_000)).toBe(true);
  });
});
