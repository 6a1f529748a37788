import { spawn } from 'node:child_process';
import path from 'node:path';

// The HTTP API fuzzed from docs/openapi.yaml by schemathesis (test/e2e/fuzz/run-schemathesis.sh):
// every check, for a bounded time, against a controller on examples/manifests. It needs no API
// server, only python3 and PyPI once (the venv is cached). Zero 5xx, zero contract violations, and
// the controller alive with no error logged.

const REPO = path.resolve(__dirname, '../..');
const FUZZ_SECONDS = Number(process.env.FOREWARN_FUZZ_SECONDS ?? 120);
// Provisioning (first run), the fuzz budget, start and stop of the controller.
const DEADLINE_MS = (FUZZ_SECONDS + 180) * 1000;

it(
  'schemathesis finds no server error and no contract violation in the controller API',
  async () => {
    const child = spawn('bash', [path.join(REPO, 'test/e2e/fuzz/run-schemathesis.sh')], {
      cwd: REPO,
      env: { ...process.env, FOREWARN_FUZZ_SECONDS: String(FUZZ_SECONDS) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGTERM'), DEADLINE_MS);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    if (code !== 0) throw new Error(`the fuzz run failed (exit ${code}):\n${output.slice(-8000)}`);
    expect(output).toMatch(/No issues found/);
  },
  DEADLINE_MS + 10_000,
);
