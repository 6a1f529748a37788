// @ts-check
'use strict';

// The Kubernetes API test server (test/support, TypeScript) in a process of its own, holding
// NetworkPolicies that the watch benchmark changes at a fixed rate. Each change flips the policy's
// `forewarn.io/severity` annotation and stamps the wall-clock time of the write, so the receiving
// process can compute the delay without a shared event loop.
// argv[2]: JSON `{"namespaces": 20, "policiesPerNamespace": 10}`.

require('../lib/register-typescript');
const { performance } = require('node:perf_hooks');
const { KubernetesApiTestServer } = require('../../test/support/kubernetes-api-server');
const { z } = require('zod');
const { reportReady, serveCommands } = require('../lib/processes');

const CHANGED_AT = 'bench.forewarn.io/changed-at';

/**
 * @param {string} namespace
 * @param {string} name
 * @param {string} severity
 * @param {number} changedAt
 */
function policy(namespace, name, severity, changedAt) {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name,
      namespace,
      annotations: { 'forewarn.io/severity': severity, [CHANGED_AT]: String(changedAt) },
    },
    spec: { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Ingress'] },
  };
}

async function main() {
  const settings = z
    .object({ namespaces: z.number().optional(), policiesPerNamespace: z.number().optional() })
    .parse(JSON.parse(process.argv[2] || '{}'));
  const namespaceCount = settings.namespaces || 20;
  const perNamespace = settings.policiesPerNamespace || 10;
  const server = new KubernetesApiTestServer({ historyLimit: 10_000 });
  /** @type {import('../lib/processes').Commands['truth']['result']} */
  const policies = [];
  for (let namespaceIndex = 0; namespaceIndex < namespaceCount; namespaceIndex++) {
    const namespace = `watch-${namespaceIndex}`;
    server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    for (let policyIndex = 0; policyIndex < perNamespace; policyIndex++) {
      const name = `policy-${policyIndex}`;
      server.create(policy(namespace, name, 'Warning', 0));
      policies.push({ namespace, name, severity: 'Warning' });
    }
  }
  await server.start();

  let next = 0;
  /**
   * Applies `rate` changes per second for `durationMs`, round-robin over the policies.
   * @param {import('../lib/processes').Commands['run-changes']['command']} command
   * @returns {Promise<import('../lib/processes').Commands['run-changes']['result']>}
   */
  const runChanges = ({ rate, durationMs }) =>
    new Promise((resolve) => {
      const tickMs = 10;
      const started = performance.now();
      let applied = 0;
      const timer = setInterval(() => {
        const elapsed = performance.now() - started;
        // Catch up to the schedule: a late tick applies every change that was due by now.
        const due = Math.min(Math.floor((elapsed / 1000) * rate), Math.floor((durationMs / 1000) * rate));
        for (; applied < due; applied++) {
          const target = policies[next++ % policies.length];
          target.severity = target.severity === 'Warning' ? 'Critical' : 'Warning';
          server.update(
            policy(
              target.namespace,
              target.name,
              target.severity,
              performance.timeOrigin + performance.now(),
            ),
          );
        }
        if (elapsed >= durationMs) {
          clearInterval(timer);
          resolve({ changes: applied, seconds: (performance.now() - started) / 1000 });
        }
      }, tickMs);
    });

  serveCommands({
    'run-changes': runChanges,
    truth: () => policies.map(({ namespace, name, severity }) => ({ namespace, name, severity })),
  });
  process.on('SIGTERM', () => server.stop().then(() => process.exit(0)));
  reportReady('servers/kubernetes-api.js', {
    kubeConfigYaml: server.kubeConfigYaml(),
    url: server.url,
    token: server.token,
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
