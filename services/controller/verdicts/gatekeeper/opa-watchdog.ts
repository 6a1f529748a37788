import { spawn, type ChildProcess } from 'node:child_process';

// `opa build` runs on template text any cluster admin writes, so it is bounded like an evaluation
// (issue 32): in time, in memory, one at a time, and it never outlives the controller. A child
// process of its own is not enough for the last: a controller killed with SIGKILL (the kubelet's
// OOM kill, a liveness restart outside a pod's cgroup) runs no exit handler, and an orphaned opa
// compiled on at full CPU for 13 minutes. So opa runs under a watchdog, a small node process that:
// - ends opa when its stdin closes: the pipe from the controller closes whenever the controller
//   ends, however it ends (no prctl(PR_SET_PDEATHSIG) from node; this works on every platform);
// - ends opa past the time limit, and past the memory limit (opa's resident size, read from
//   /proc every 50 ms; GOMEMLIMIT also asks Go's collector to stay under it);
// - answers with opa's exit code, or 124 (time) / 137 (memory) and a line on stderr saying which.
// opa is started in its own process group, ended with the group, so that nothing it starts remains.

const WATCHDOG = `
const { spawn } = require('node:child_process');
const { readFileSync } = require('node:fs');
const [opa, timeoutMs, memoryMb, ...args] = process.argv.slice(1);
const child = spawn(opa, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true,
  env: { ...process.env, GOMEMLIMIT: memoryMb + 'MiB' } });
let ended = false;
function end(code, why) {
  if (ended) return;
  ended = true;
  try { process.kill(-child.pid, 'SIGKILL'); } catch {}
  if (why) process.stderr.write(why + '\\n');
  process.exit(code);
}
child.stderr.on('data', (chunk) => process.stderr.write(chunk));
child.on('error', (error) => end(127, error.message));
child.on('exit', (code, signal) => { if (!ended) { ended = true; process.exit(code ?? (signal ? 1 : 0)); } });
process.stdin.on('end', () => end(1, 'the controller ended'));
process.stdin.on('error', () => end(1, 'the controller ended'));
process.stdin.resume();
process.on('SIGTERM', () => end(143, 'stopped'));
setTimeout(() => end(124, 'opa took longer than ' + timeoutMs + ' ms'), Number(timeoutMs));
setInterval(() => {
  try {
    const status = readFileSync('/proc/' + child.pid + '/status', 'utf8');
    const rss = /VmRSS:\\s+(\\d+) kB/.exec(status);
    if (rss && Number(rss[1]) > Number(memoryMb) * 1024) end(137, 'opa used more than ' + memoryMb + ' MiB');
  } catch {}
}, 50);
`;

export interface OpaLimits {
  timeoutMilliseconds: number;
  memoryMegabytes: number;
}

export type OpaOutcome = { ok: true } | { ok: false; message: string; limit?: 'time' | 'memory' };

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Belt and braces for an orderly exit: the watchdogs (and with them opa) are ended at once. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** Runs `opa` with `args` under the watchdog; resolves with how it ended (never rejects). */
export function runOpaWatched(opa: string, args: string[], limits: OpaLimits): Promise<OpaOutcome> {
  installExitHook();
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['-e', WATCHDOG, opa, String(limits.timeoutMilliseconds), String(limits.memoryMegabytes), ...args],
      // No NODE_OPTIONS: the controller's heap limit is not the watchdog's.
      { stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
    );
    running.add(child);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 64 * 1024) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => {
      running.delete(child);
      resolve({ ok: false, message: error.message });
    });
    child.on('close', (code) => {
      running.delete(child);
      if (code === 0) return resolve({ ok: true });
      const message = stderr.trim().split('\n').slice(0, 6).join('\n') || `opa exited with ${code}`;
      resolve({
        ok: false,
        message,
        ...(code === 124 ? { limit: 'time' as const } : code === 137 ? { limit: 'memory' as const } : {}),
      });
    });
  });
}

/** Process ids of the watchdogs running now (tests check that none is left behind). */
export function runningWatchdogs(): number[] {
  return [...running].map((child) => child.pid ?? -1);
}
