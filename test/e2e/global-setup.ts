// Jest global setup of the e2e tier: makes sure the cached etcd, kube-apiserver, kube-controller-manager
// and kubectl exist (test/e2e/provision/build-tools.sh is idempotent: seconds when the cache is warm, a
// cold build otherwise). run.sh has already done it and set FOREWARN_TOOLS_BIN; a direct `jest -c
// test/e2e/jest.config.js` gets it here. A provisioning failure fails the whole run with the message.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const TOOLS_THE_TIER_NEEDS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kubectl'];

export default function buildOrVerifyBinaries(): void {
  const given = process.env.FOREWARN_TOOLS_BIN;
  if (given && TOOLS_THE_TIER_NEEDS.every((tool) => existsSync(path.join(given, tool)))) return;
  const script = path.join(__dirname, 'provision', 'build-tools.sh');
  const result = spawnSync('bash', [script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    env: { ...process.env, FOREWARN_TOOLS_ONLY: 'kubernetes etcd' },
  });
  if (result.error) throw new Error(`cannot run ${script}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(`e2e provisioning failed (${script} exited ${result.status}); see its message above`);
  }
  const binDirLine = result.stdout.split('\n').find((line) => line.startsWith('FOREWARN_TOOLS_BIN='));
  if (!binDirLine) throw new Error(`${script} printed no FOREWARN_TOOLS_BIN= line`);
  process.env.FOREWARN_TOOLS_BIN = binDirLine.slice('FOREWARN_TOOLS_BIN='.length);
}
