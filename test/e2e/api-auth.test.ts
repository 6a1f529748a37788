// Who reads the controller's webhook API unredacted (issue 13 item 5, DESIGN.md 5), against the real
// API server: the controller runs as its own ServiceAccount with the component's RBAC (infra/rbac.ts,
// which lets it create TokenReviews) and `--api-auth=tokenreview`; the webhook's ServiceAccount token
// for the audience `forewarn-controller` (what the webhook's projected token is, made here by the
// TokenRequest API as `kubectl create token --audience` does) gets `/api/v1/constraints` and
// `/api/v1/admission-check` unredacted; no token, another ServiceAccount's token or the webhook's
// token for another audience gets the same answer redacted at the controller's `--detail-level`.
import { startCluster, waitFor, type Cluster } from './harness';
import { asJsonObject, ControllerApi, ManagedProcess, requireBuiltEntries } from './forewarn-support';
import { controllerReady, launchController, requireStarted } from './controller-process';
import {
  authorizationErrors,
  controllerServiceAccount,
  identitiesManifest,
  webhookServiceAccount,
} from './forewarn-identities';
import { admissionPolicies, admissionPolicyObjects, VAP_NAMESPACE } from './verdicts-manifests';

const SYSTEM_NAMESPACE = 'forewarn-system';
const AUDIENCE = 'forewarn-controller';
/** A cluster-scoped binding's name: shown in full to the webhook, hidden at `summary`. */
const POLICY = 'require-memory-limits';

let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let api: ControllerApi | undefined;
const tokens: Record<string, string | undefined> = {};

const running = (): { cluster: Cluster; api: ControllerApi } => requireStarted(cluster, api);

async function kubectlOk(args: string[], stdin?: string): Promise<string> {
  if (!cluster) throw new Error('the cluster did not start (see beforeAll)');
  const result = await cluster.kubectl(args, stdin === undefined ? {} : { stdin });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

async function token(serviceAccount: string, audience?: string): Promise<string> {
  const args = ['create', 'token', serviceAccount, '-n', SYSTEM_NAMESPACE, '--duration=3600s'];
  return (await kubectlOk(audience ? [...args, `--audience=${audience}`] : args)).trim();
}

/** The policy names and detail levels the controller shows the caller with this token in both webhook routes. */
async function namesSeen(
  bearer: string | undefined,
): Promise<{ list: string[]; check: string[]; levels: string[] }> {
  const headers: Record<string, string> = bearer ? { authorization: `Bearer ${bearer}` } : {};
  const base = running().api.baseUrl;
  const listed = await fetch(`${base}/api/v1/constraints?namespace=${VAP_NAMESPACE}&resource=pods`, {
    headers,
    signal: AbortSignal.timeout(5_000),
  });
  const checked = await fetch(`${base}/api/v1/admission-check`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({
      operation: 'CREATE',
      object: admissionPolicyObjects.find((each) => each.kind === 'Pod'),
    }),
    signal: AbortSignal.timeout(5_000),
  });
  const entries = async (response: Response, what: string): Promise<Array<Record<string, unknown>>> => {
    if (response.status !== 200) throw new Error(`${what}: HTTP ${response.status}`);
    const body = asJsonObject(await response.json(), what);
    return (Array.isArray(body.constraints) ? body.constraints : []).map((entry: unknown) =>
      asJsonObject(entry, what),
    );
  };
  const list = await entries(listed, 'constraints');
  const check = await entries(checked, 'admission-check');
  return {
    list: list.map((entry) => String(entry.name)),
    check: check.map((entry) => String(entry.name)),
    levels: [...list, ...check].map((entry) => String(entry.detailLevel)),
  };
}

beforeAll(async () => {
  requireBuiltEntries();
  cluster = await startCluster();
  await kubectlOk(['create', 'namespace', SYSTEM_NAMESPACE]);
  await kubectlOk(
    ['apply', '-f', '-'],
    identitiesManifest({
      namespace: SYSTEM_NAMESPACE,
      tlsSecretName: 'forewarn-webhook-tls',
      webhookConfigurationName: 'forewarn',
    }),
  );
  await kubectlOk(['apply', '-f', '-'], admissionPolicies.map((item) => JSON.stringify(item)).join('\n'));
  const kubeconfig = await cluster.serviceAccountKubeconfig(SYSTEM_NAMESPACE, controllerServiceAccount, 3600);
  controller = launchController(cluster, {
    kubeconfig,
    detailLevel: 'summary',
    extraArgs: [
      '--api-auth',
      'tokenreview',
      '--webhook-service-account',
      `${SYSTEM_NAMESPACE}/${webhookServiceAccount}`,
    ],
  });
  ({ api } = await controllerReady(controller));
  tokens.webhook = await token(webhookServiceAccount, AUDIENCE);
  tokens.otherServiceAccount = await token(controllerServiceAccount, AUDIENCE);
  tokens.otherAudience = await token(webhookServiceAccount);
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

test("the webhook's token unlocks the unredacted answers; no token, another ServiceAccount or audience gets them redacted", async () => {
  const unredacted = await waitFor(
    async () => {
      const seen = await namesSeen(tokens.webhook);
      return seen.list.includes(POLICY) && seen.check.includes(POLICY) ? seen : false;
    },
    30_000,
    { description: `${POLICY} named to the webhook` },
  );
  expect(unredacted.check).toContain(POLICY);
  expect(new Set(unredacted.levels)).toEqual(new Set(['full']));
  for (const caller of [undefined, tokens.otherServiceAccount, tokens.otherAudience, 'not-a-token']) {
    const seen = await namesSeen(caller);
    // The same entries at the controller's level, not in full. Admission policies name themselves in
    // the API server's own messages, so their names show at every level (issue 31's naming rule).
    expect(seen.list.length).toBe(unredacted.list.length);
    expect(seen.check.length).toBe(unredacted.check.length);
    expect(seen.check).toContain(POLICY);
    expect(new Set(seen.levels)).toEqual(new Set(['summary']));
  }
});

test("the controller's TokenReviews pass the component's own RBAC", async () => {
  const log = controller?.tail(2_000) ?? '';
  expect(authorizationErrors(log)).toEqual([]);
  expect(log).not.toContain('TokenReview failed');
});
