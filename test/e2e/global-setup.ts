// Jest global setup of the e2e tier: makes sure the cached kube-apiserver and kubectl exist
// (test/e2e/provision/build-apiserver.sh is idempotent: about a second when the cache is warm, a
// cold build otherwise). A provisioning failure fails the whole run with the script's message.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export default function buildOrVerifyBinaries(): void {
  const script = path.join(__dirname, 'provision', 'build-apiserver.sh');
  const result = spawnSync('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (result.error) throw new Error(`cannot run ${script}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(`e2e provisioning failed (${script} exited ${result.status}); see its message above`);
  }
  const binDirLine = result.stdout.split('\n').find((line) => line.startsWith('FOREWARN_E2E_BIN_DIR='));
  if (binDirLine) process.env.FOREWARN_E2E_BIN_DIR = binDirLine.slice('FOREWARN_E2E_BIN_DIR='.length);
}
