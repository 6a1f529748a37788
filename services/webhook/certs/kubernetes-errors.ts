// Reads failures of @kubernetes/client-node calls: API errors carry the HTTP status in `code`
// (ApiException), transport errors a string `code` (ECONNREFUSED) and no status.

export function httpStatusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number') return code;
  const statusCode = (error as { statusCode?: unknown }).statusCode;
  return typeof statusCode === 'number' ? statusCode : undefined;
}

// The API server's Status object, as text or already parsed, depending on the client's path.
function statusMessageOf(body: unknown): string | undefined {
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const message =
    typeof parsed === 'object' && parsed !== null ? (parsed as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : undefined;
}

/** A one-line description for logs: the status and the API server's message, never a body dump. */
export function describeKubernetesError(error: unknown): string {
  const status = httpStatusOf(error);
  const body = typeof error === 'object' && error !== null ? (error as { body?: unknown }).body : undefined;
  let message = error instanceof Error ? error.message.split('\n')[0] : String(error);
  const apiMessage = statusMessageOf(body);
  if (apiMessage) message = apiMessage;
  return status === undefined ? message : `HTTP ${status}: ${message}`;
}

/** What an operator should check for a failed call, by status. */
export function remedyFor(error: unknown, resource: string): string {
  switch (httpStatusOf(error)) {
    case 403:
      return `grant the webhook's ServiceAccount the verbs it needs on ${resource} (Role/ClusterRole of the deployment)`;
    case 401:
      return 'check the webhook pod service account token / --kubeconfig credentials';
    case undefined:
      return 'check that the API server is reachable from the webhook pod (network policy, --kubeconfig)';
    default:
      return `check the API server's answer for ${resource}`;
  }
}
