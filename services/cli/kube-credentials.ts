import { isIPv4 } from 'node:net';
import { homedir } from 'node:os';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { usageError } from './exit-codes';
import { errorMessage } from '../model/error-message';

// `forewarn --as-me` (issue 24): the bearer token of the current kubeconfig context, as kubectl would
// send it to the API server, for the controller to authenticate (TokenReview) and to ask what this
// user may read (SubjectAccessReview). @kubernetes/client-node does what kubectl does: a static token,
// a token file, an exec plugin run as kubectl runs it (e.g. `aws eks get-token`, `kubelogin`), or an
// OIDC auth-provider. A context that authenticates with a client certificate has no token to show:
// the certificate proves who you are to the API server only over its own TLS connection, and the
// TokenRequest API issues tokens for ServiceAccounts only, so there is nothing the CLI can obtain for
// a certificate user; it says so instead of silently answering at the controller's level.

/** The kubeconfig files as kubectl finds them: `$KUBECONFIG` (a list) or `~/.kube/config`. */
export function kubeconfigFiles(env: NodeJS.ProcessEnv): string[] {
  const listed = (env.KUBECONFIG ?? '').split(path.delimiter).filter((file) => file !== '');
  if (listed.length > 0) return listed;
  return [path.join(env.HOME ?? homedir(), '.kube', 'config')];
}

function loadKubeConfig(env: NodeJS.ProcessEnv): KubeConfig {
  const kubeConfig = new KubeConfig();
  const files = kubeconfigFiles(env).filter((file) => existsSync(file));
  if (files.length === 0)
    throw usageError(`--as-me needs a kubeconfig; none found at ${kubeconfigFiles(env).join(', ')}`);
  files.forEach((file, index) => {
    try {
      if (index === 0) return kubeConfig.loadFromFile(file);
      // As kubectl: the first file that sets a value wins, the current context included.
      const next = new KubeConfig();
      next.loadFromFile(file);
      kubeConfig.mergeConfig(next, true);
    } catch (failure) {
      throw usageError(`--as-me could not read the kubeconfig ${file}: ${errorMessage(failure)}`);
    }
  });
  return kubeConfig;
}

/** The bearer token of the current context's user; a usage error when it has none to give. */
export async function currentContextToken(env: NodeJS.ProcessEnv): Promise<string> {
  const kubeConfig = loadKubeConfig(env);
  const user = kubeConfig.getCurrentUser();
  const context = kubeConfig.getCurrentContext();
  if (!user)
    throw usageError(`--as-me: the current kubeconfig context ${JSON.stringify(context)} names no user`);
  const options: { headers: Record<string, string> } = { headers: {} };
  try {
    await kubeConfig.applyToHTTPSOptions(options);
  } catch (failure) {
    throw usageError(
      `--as-me: getting the credentials of user ${JSON.stringify(user.name)} failed: ${errorMessage(failure)}`,
    );
  }
  const match = /^Bearer (\S+)$/.exec(options.headers.Authorization ?? '');
  if (match) return match[1];
  if (user.certFile || user.certData)
    throw usageError(
      `--as-me: user ${JSON.stringify(user.name)} of context ${JSON.stringify(context)} signs in with a client certificate, which only the API server can verify; the controller needs a bearer token. Use a context with a token, an exec plugin or OIDC, or (for a ServiceAccount you may act as) kubectl create token`,
    );
  throw usageError(
    `--as-me: user ${JSON.stringify(user.name)} of context ${JSON.stringify(context)} has no bearer token`,
  );
}

/**
 * Whether a URL's host (as `URL.hostname` gives it: IPv4 literals in dotted-quad form, IPv6 in
 * brackets) is this machine: `localhost`, an IPv4 literal in 127.0.0.0/8, or `[::1]`. Only literals:
 * a name such as `127.evil.example` is resolved by DNS and may point anywhere (issue 32, row 10).
 */
export function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  return isIPv4(hostname) && hostname.split('.')[0] === '127';
}

/**
 * A token sent over plain HTTP is readable on the way: only to a loopback address (the port-forward
 * `forewarn` is used through), otherwise only over HTTPS.
 */
export function requireSafeUrlForCredentials(url: URL): void {
  if (url.protocol === 'https:' || isLoopbackHost(url.hostname)) return;
  throw usageError(
    `--as-me sends your Kubernetes credentials: use https:// or a port-forward on localhost, not ${url.origin}`,
  );
}
