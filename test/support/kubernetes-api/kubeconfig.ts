import { stringify as toYaml } from 'yaml';

/**
 * A kubeconfig file for the test API server: one cluster, user and context named `forewarn-test`,
 * plain HTTP (hence insecure-skip-tls-verify) and the server's bearer token.
 */
export function testServerKubeConfigYaml(serverUrl: string, token: string): string {
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'forewarn-test', cluster: { server: serverUrl, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'forewarn-test', user: { token } }],
    contexts: [
      {
        name: 'forewarn-test',
        context: { cluster: 'forewarn-test', user: 'forewarn-test', namespace: 'default' },
      },
    ],
    'current-context': 'forewarn-test',
  });
}
