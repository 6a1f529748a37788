import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { requiredLabelPolicy } from '../../../test/support/required-label-policy';
import { buildAdmissionCheck } from '../verdicts/admission-check';
import { IndexOverlay } from './index-overlay';

// An impact request reads the overlay while it yields between slices, so the index under it may
// change meanwhile: what admission checks keep per index revision must see that change through the
// overlay as well.

const deployment: KubernetesObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'nginx' }] },
    },
  },
};

function checkedNames(index: IndexOverlay): string[] {
  return buildAdmissionCheck(index, { object: deployment, operation: 'CREATE' }).constraints.map(
    (entry) => entry.name,
  );
}

describe('IndexOverlay revision', () => {
  it('moves with the overlay’s own writes and with the index under it', () => {
    const { index } = indexObjects([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }]);
    const overlay = new IndexOverlay(index);
    const start = overlay.revision;
    index.setNamespace('blog', {});
    const afterIndexChange = overlay.revision;
    expect(afterIndexChange).toBeGreaterThan(start);
    overlay.setNamespace('docs', {});
    expect(overlay.revision).toBeGreaterThan(afterIndexChange);
  });

  it('lets an admission check on the overlay see a policy the index gained after a first check', () => {
    const { index, ingestor } = indexObjects([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    ]);
    const overlay = new IndexOverlay(index);
    expect(checkedNames(overlay)).toEqual([]);
    for (const object of requiredLabelPolicy({
      name: 'owner-required',
      label: 'owner',
      actions: ['Deny'],
      bindingUid: 'uid-binding-owner-required',
    }))
      ingestor.upsert(object);
    expect(checkedNames(overlay)).toEqual(checkedNames(new IndexOverlay(index)));
    expect(checkedNames(overlay)).not.toEqual([]);
  });
});
