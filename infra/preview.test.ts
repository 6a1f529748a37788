// A preview of a first deploy: the images come from another resource and the TLS provider has computed
// nothing yet, so both are unknown. The component must still construct every object, and the outputs
// that do not depend on unknowns must be known.
import * as k8s from '@pulumi/kubernetes';
import { Forewarn } from './';
import {
  at,
  installMocks,
  isKnown,
  isUnknownInput,
  ofType,
  one,
  settle,
  valueOf,
} from '../test/support/infra-harness';

describe('preview with unknown inputs', () => {
  it('constructs every object; names and the port-forward hint stay known, the CA does not', async () => {
    const registered = installMocks({ preview: true, unknownTlsOutputs: true });
    // The mock returns no `data`: like an image built by another resource, it is unknown during preview.
    const imageSource = new k8s.core.v1.ConfigMap('image-source', { metadata: { name: 'image-source' } });
    const image = imageSource.data.apply((data) => data?.image ?? 'unused');
    expect(await isKnown(image)).toBe(false);

    const forewarn = new Forewarn('fw', { images: { controller: image } });
    expect(await valueOf(forewarn.namespace)).toBe('fw');
    expect(await valueOf(forewarn.portForwardCommand)).toBe(
      'kubectl -n fw port-forward svc/fw-controller 8080:8080',
    );
    expect(await valueOf(forewarn.webhookConfigurationName)).toBe('fw-webhook');
    expect(await isKnown(forewarn.caCertificate)).toBe(false);
    await settle(registered);

    expect(ofType(registered, 'kubernetes:apps/v1:Deployment')).toHaveLength(2);
    expect(ofType(registered, 'kubernetes:core/v1:Secret')).toHaveLength(2);
    const configuration = one(
      registered,
      'kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration',
      'fw-webhook',
    );
    // Unknown values reach the engine as unknowns, known ones as values.
    expect(isUnknownInput(at(configuration, 'webhooks', 0, 'clientConfig', 'caBundle'))).toBe(true);
    expect(at(configuration, 'webhooks', 0, 'failurePolicy')).toBe('Ignore');
    const controller = one(registered, 'kubernetes:apps/v1:Deployment', 'fw-controller');
    expect(isUnknownInput(at(controller, 'spec', 'template', 'spec', 'containers', 0, 'image'))).toBe(true);
    expect(at(controller, 'spec', 'template', 'spec', 'containers', 0, 'args', 0)).toBe('--port=8080');
  });
});
