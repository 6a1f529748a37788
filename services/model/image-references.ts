import { isRecord, groupOf, type KubernetesObject } from './kubernetes';
import { matchesWildcard } from './wildcard';
import { podTemplateOf, workloadKind } from './workload-kinds';

// Rules that apply only to pods running some images (Kyverno `verifyImages.imageReferences`): a pod
// of `nginx` is not asked to sign `ghcr.io/acme/*` images. Pure, shared by the list query and `check`.

/**
 * The spellings an image may be matched under: as written, and normalised the way registries read a
 * short name (`nginx` is `docker.io/library/nginx:latest`). Any of them matching counts, so a rule
 * is never hidden from a pod it may apply to.
 */
function imageSpellings(image: string): string[] {
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const tagged = lastSegment.includes(':') || lastSegment.includes('@') ? image : `${image}:latest`;
  const firstSegment = image.split('/')[0];
  const hasRegistry =
    image.includes('/') &&
    (firstSegment.includes('.') || firstSegment.includes(':') || firstSegment === 'localhost');
  const spellings = [image, tagged];
  if (!hasRegistry) {
    const path = image.includes('/') ? tagged : `library/${tagged}`;
    spellings.push(`docker.io/${path}`, `docker.io/${tagged}`);
  }
  return spellings;
}

/** Images of every container (init and ephemeral too) of a Pod or a controller's pod template. */
export function imagesOf(object: KubernetesObject): string[] | undefined {
  const entry = workloadKind(groupOf(object.apiVersion), object.kind ?? '');
  if (entry === undefined) return undefined;
  const podSpec = (podTemplateOf(object, entry) as { spec?: unknown } | undefined)?.spec;
  if (!isRecord(podSpec)) return [];
  return ['containers', 'initContainers', 'ephemeralContainers'].flatMap((field) => {
    const list = podSpec[field];
    return Array.isArray(list)
      ? list
          .filter(isRecord)
          .flatMap((container) => (typeof container.image === 'string' ? [container.image] : []))
      : [];
  });
}

/** Whether the object runs an image the references name (no references: every object). */
export function objectRunsReferencedImage(
  object: KubernetesObject,
  references: readonly string[] | undefined,
): boolean {
  if (references === undefined || references.length === 0) return true;
  const images = imagesOf(object);
  // Not a pod or pod controller: the rule's kinds decide, not its images.
  if (images === undefined) return true;
  return images.some((image) =>
    imageSpellings(image).some((spelling) =>
      references.some((reference) => matchesWildcard(reference, spelling)),
    ),
  );
}
