import { PatchStrategy, setHeaderOptions, type AdmissionregistrationV1Api } from '@kubernetes/client-node';
import type { V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import type { Logger } from '../../logging/logger';
import { backoffDelay, sleep, type BackoffPolicy } from './backoff';
import { describeKubernetesError, httpStatusOf, remedyFor } from './kubernetes-errors';

// Self-signed mode makes the API server trust our CA by writing it into every
// `webhooks[*].clientConfig.caBundle` of our ValidatingWebhookConfiguration (spec 5). The
// registration may be created after the pod starts (the deploy tool applies it last, or
// concurrently), so a missing registration is retried with exponential backoff, up to 10 tries.

/** Spec 8: up to 10 attempts. 1 s doubling to 30 s spans about two and a half minutes. */
export const DEFAULT_INJECTION_BACKOFF: BackoffPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  factor: 2,
  maxAttempts: 10,
  jitter: 0.2,
};

export interface JsonPatchOperation {
  op: 'test' | 'add';
  path: string;
  value: unknown;
}

/**
 * The JSON patch that sets every webhook's caBundle, or null when all already carry it. The
 * leading `test` of the resourceVersion makes the patch fail instead of writing into entries that
 * were reordered since the read.
 */
export function caBundlePatch(
  configuration: V1ValidatingWebhookConfiguration,
  caBundleBase64: string,
): JsonPatchOperation[] | null {
  const webhooks = configuration.webhooks ?? [];
  const stale = webhooks
    .map((webhook, index) => ({ index, current: webhook.clientConfig?.caBundle }))
    .filter(({ current }) => current !== caBundleBase64);
  if (stale.length === 0) return null;
  return [
    { op: 'test', path: '/metadata/resourceVersion', value: configuration.metadata?.resourceVersion ?? '' },
    ...stale.map(({ index }) => ({
      op: 'add' as const,
      path: `/webhooks/${index}/clientConfig/caBundle`,
      value: caBundleBase64,
    })),
  ];
}

export type InjectionOutcome =
  | { status: 'injected' | 'unchanged'; attempts: number; webhooks: number }
  | { status: 'gave_up' | 'cancelled'; attempts: number; lastError: string };

export interface CaInjectionRequest {
  admissionApi: AdmissionregistrationV1Api;
  webhookName: string;
  caPem: string;
  logger: Logger;
  backoff?: BackoffPolicy;
  signal?: AbortSignal;
}

async function injectOnce(
  request: CaInjectionRequest,
  caBundleBase64: string,
): Promise<{ status: 'injected' | 'unchanged'; webhooks: number }> {
  const configuration = await request.admissionApi.readValidatingWebhookConfiguration({
    name: request.webhookName,
  });
  const webhooks = configuration.webhooks?.length ?? 0;
  const patch = caBundlePatch(configuration, caBundleBase64);
  if (!patch) return { status: 'unchanged', webhooks };
  await request.admissionApi.patchValidatingWebhookConfiguration(
    { name: request.webhookName, body: patch },
    setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
  );
  return { status: 'injected', webhooks };
}

/** Writes the CA bundle into the registration, retrying; resolves (never rejects) with what happened. */
export async function injectCaBundle(request: CaInjectionRequest): Promise<InjectionOutcome> {
  const policy = request.backoff ?? DEFAULT_INJECTION_BACKOFF;
  const caBundleBase64 = Buffer.from(request.caPem, 'utf8').toString('base64');
  const registration = `ValidatingWebhookConfiguration ${request.webhookName}`;
  let lastError = '';
  for (let attempt = 1; attempt <= policy.maxAttempts; attempt += 1) {
    if (request.signal?.aborted) return { status: 'cancelled', attempts: attempt - 1, lastError };
    try {
      const { status, webhooks } = await injectOnce(request, caBundleBase64);
      if (status === 'injected') {
        request.logger.info(
          { event: 'ca_bundle_injected', registration, webhooks, attempts: attempt },
          'CA bundle injected',
        );
      }
      if (webhooks === 0) {
        request.logger.warn(
          { event: 'ca_bundle_no_webhooks', registration },
          'the registration has no webhooks entries; nothing to inject. Check the deployment manifests',
        );
      }
      return { status, attempts: attempt, webhooks };
    } catch (error) {
      lastError = describeKubernetesError(error);
      const httpStatus = httpStatusOf(error);
      const remedy =
        httpStatus === 404
          ? `create ${registration}, or set --webhook-name to its name; retrying`
          : httpStatus === 409 || httpStatus === 422
            ? 'the registration changed while patching; retrying'
            : remedyFor(error, 'validatingwebhookconfigurations (get, patch)');
      request.logger.warn(
        {
          event: 'ca_bundle_injection_failed',
          registration,
          attempt,
          maxAttempts: policy.maxAttempts,
          error: lastError,
        },
        `could not inject the CA bundle: ${remedy}`,
      );
    }
    if (attempt < policy.maxAttempts) await sleep(backoffDelay(policy, attempt), request.signal);
  }
  request.logger.warn(
    { event: 'ca_bundle_injection_gave_up', registration, attempts: policy.maxAttempts, error: lastError },
    'gave up injecting the CA bundle; the API server cannot call the webhook (requests are still admitted, without warnings). It is retried at the next rotation check, or restart the webhook pods once the registration exists',
  );
  return { status: 'gave_up', attempts: policy.maxAttempts, lastError };
}
