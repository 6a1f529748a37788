// The opaque-reference key (docs/operations.md): the component's own Secret by default, or the
// platform team's.
import { Forewarn, type ForewarnArgs } from './';
import {
  at,
  installMocks,
  one,
  settle,
  valueOf,
  type JsonObject,
  type Registered,
} from '../test/support/infra-harness';

async function render(name: string, args: ForewarnArgs = {}): Promise<Registered[]> {
  const registered = installMocks();
  const forewarn = new Forewarn(name, args);
  await valueOf(forewarn.portForwardCommand);
  await settle(registered);
  return registered;
}

function container(deployment: JsonObject): JsonObject {
  return at(deployment, 'spec', 'template', 'spec', 'containers', 0) as JsonObject;
}

const DEPLOYMENT = 'kubernetes:apps/v1:Deployment';

describe('the reference key', () => {
  let registered: Registered[];
  beforeAll(async () => {
    registered = await render('forewarn');
  });

  it('gives the controller a reference key of its own: a Secret of 256 random bits, mounted read-only', () => {
    const key = one(registered, 'tls:index/privateKey:PrivateKey', 'forewarn-controller-reference-key');
    expect(key).toEqual({ algorithm: 'ED25519' });
    const secret = one(registered, 'kubernetes:core/v1:Secret', 'forewarn-controller-reference-key');
    expect(at(secret, 'metadata', 'namespace')).toBe('forewarn');
    const deployment = one(registered, 'kubernetes:apps/v1:Deployment', 'forewarn-controller');
    expect(at(deployment, 'spec', 'template', 'spec', 'volumes')).toContainEqual({
      name: 'reference-key',
      secret: { secretName: 'forewarn-controller-reference-key', items: [{ key: 'key', path: 'key' }] },
    });
    expect(container(deployment).volumeMounts).toContainEqual({
      name: 'reference-key',
      mountPath: '/etc/forewarn/reference-key',
      readOnly: true,
    });
  });

  it('mounts an existing reference-key Secret and creates none', async () => {
    const registered = await render('fw', { controller: { referenceKeySecret: 'shared-reference-key' } });
    expect(registered.filter((r) => r.name === 'fw-controller-reference-key')).toEqual([]);
    const deployment = one(registered, DEPLOYMENT, 'fw-controller');
    expect(at(deployment, 'spec', 'template', 'spec', 'volumes')).toContainEqual({
      name: 'reference-key',
      secret: { secretName: 'shared-reference-key', items: [{ key: 'key', path: 'key' }] },
    });
    expect(container(deployment).args).toContain('--reference-key-file=/etc/forewarn/reference-key/key');
  });
});
