import { groupOf, referenceKey, withoutManagedFields, type KubernetesObject } from '../../model/kubernetes';
import type { FindExistingObject } from '../verdicts/existing-objects';

export type { FindExistingObject } from '../verdicts/existing-objects';

// The stored objects of a directory of manifests (`forewarn check --manifests DIR`, the controller's
// `--manifests`): what an apply of one of them again would update (issue 31).

/** Kind, namespace and name; an object without a namespace counts as in `default` (kubectl's). */
function identityKey(object: KubernetesObject): string {
  const namespace = object.metadata?.namespace;
  return referenceKey({
    group: groupOf(object.apiVersion),
    kind: object.kind ?? '',
    namespace: typeof namespace === 'string' && namespace !== '' ? namespace : 'default',
    name: object.metadata?.name ?? '',
  });
}

/**
 * Offline (`forewarn check --manifests DIR`): the objects of DIR are what the cluster holds. Kept
 * by kind, namespace and name as they are seen (the last one seen wins, as `kubectl apply` of the
 * directory would leave it).
 */
export class ObjectsInFiles {
  private readonly objects = new Map<string, KubernetesObject>();

  observe(object: KubernetesObject, removed: boolean): void {
    const key = identityKey(object);
    if (removed) this.objects.delete(key);
    else this.objects.set(key, withoutManagedFields(object));
  }

  readonly find: FindExistingObject = (object) => Promise.resolve(this.objects.get(identityKey(object)));
}
