import request from 'supertest';
import { createApiAccess } from '../../services/controller/http/api-auth';
import { kubernetesTokenReviewer } from '../../services/controller/http/token-review';
import { silentLogger } from '../../services/logging/logger';
import { ParamKindError, parseParamKinds } from '../../services/model/param-kinds';
import { fixtureControllerApp, indexObjects } from '../support/controller-fixtures';
import { KubernetesApiTestServer } from '../support/kubernetes-api-server';
import { testCallerReadAccess } from '../support/caller-rbac-fixtures';
import {
  SECRET_PARAM_DEPLOYMENT,
  SECRET_PARAM_OBJECTS,
  SECRET_PARAM_VALUE,
} from '../support/secret-param-policy';

// Issue 32, row 11: a caller who may read a ValidatingAdmissionPolicy and its binding, but not the
// binding's param object, got the param's value at `full` through the policy's messageExpression.
// Now a binding is elevated through the caller's RBAC only when it may read the params too. And
// `--param-kinds` accepted built-in groups such as `events.k8s.io`.

jest.setTimeout(30_000);

const apiServer = new KubernetesApiTestServer();
beforeAll(() => apiServer.start());
afterAll(() => apiServer.stop());

const READ_ADMISSION_POLICIES = [
  {
    apiGroups: ['admissionregistration.k8s.io'],
    resources: ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'],
    verbs: ['get'],
  },
];
const READ_PARAMS = [
  { apiGroups: ['constraints.gatekeeper.sh'], resources: ['k8sallowedrepos'], verbs: ['get'] },
];

function appAtSummary() {
  return fixtureControllerApp(indexObjects(SECRET_PARAM_OBJECTS), {
    configuredDetailLevel: 'summary',
    apiAccess: createApiAccess({
      mode: 'tokenreview',
      configuredDetailLevel: 'summary',
      webhookServiceAccount: 'forewarn-system/forewarn-webhook',
      reviewToken: kubernetesTokenReviewer(apiServer.kubeConfig()),
      logger: silentLogger(),
    }),
    callerReadAccess: testCallerReadAccess(apiServer),
  });
}

async function admissionCheckAs(username: string): Promise<string> {
  const token = apiServer.tokens.issueUserToken({ username });
  const response = await request(appAtSummary())
    .post('/api/v1/admission-check')
    .set('authorization', `Bearer ${token}`)
    .send({ object: SECRET_PARAM_DEPLOYMENT, operation: 'CREATE' });
  expect(response.status).toBe(200);
  return JSON.stringify(response.body);
}

it('may read the policy and its binding, not the param: the param value stays out of the answer', async () => {
  apiServer.access.grant({
    subject: { kind: 'User', name: 'policy-reader' },
    rules: READ_ADMISSION_POLICIES,
  });
  expect(await admissionCheckAs('policy-reader')).not.toContain(SECRET_PARAM_VALUE);
});

it('may read the param as well: the message the API server would print, in full', async () => {
  apiServer.access.grant({
    subject: { kind: 'User', name: 'param-reader' },
    rules: [...READ_ADMISSION_POLICIES, ...READ_PARAMS],
  });
  expect(await admissionCheckAs('param-reader')).toContain(SECRET_PARAM_VALUE);
});

it.each(['events.k8s.io/v1/events', 'resource.k8s.io/v1/resourceclaims', 'apps/v1/deployments'])(
  '--param-kinds refuses the built-in group of %s',
  (entry) => {
    expect(() => parseParamKinds(entry)).toThrow(ParamKindError);
  },
);
