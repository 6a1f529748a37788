import { celList, celMap, type CelValue } from '@bufbuild/cel';
import { compileCel } from './cel-program';
import { jsonAsCel } from './json-as-cel';
import { CostTracker } from './runtime-cost';
import { unlimitedGuard } from '../guard/evaluation-guard';

// The conversion on first read must give CEL exactly what converting the whole object up front gave:
// each expression below runs on both and must answer the same value, error and cost.

function eagerlyConverted(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return celList(value.map(eagerlyConverted) as CelValue[]);
  return celMap(
    new Map(Object.entries(value).map(([key, field]) => [key, eagerlyConverted(field)])) as Map<
      string,
      CelValue
    >,
  );
}

const deployment = JSON.parse(`{
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web", "2": "two", "tier": "front"},
    "annotations": {}, "__proto__": {"kept": "as a field"}},
  "spec": {"replicas": 3, "ratio": 0.5, "paused": false, "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
      "containers": [
        {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
         "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}},
        {"name": "sidecar", "image": "busybox", "securityContext": {"runAsNonRoot": true}}
      ],
      "volumes": [], "nodeSelector": null}}}
}`) as Record<string, unknown>;

const EXPRESSIONS = [
  'object.metadata.name',
  'object.spec.replicas + 1',
  'object.spec.ratio * 2.0',
  'object.spec.paused',
  'has(object.metadata.labels.app) && !has(object.metadata.labels.owner)',
  "'owner' in object.metadata.labels",
  "'2' in object.metadata.labels",
  'size(object.metadata.labels)',
  'object.metadata.labels',
  'object.metadata.labels.map(key, key)',
  'object.metadata.labels.map(key, object.metadata.labels[key])',
  'object.metadata.labels.all(key, key != "")',
  'object.metadata.labels.exists_one(key, key == "tier")',
  'object.metadata.annotations == {}',
  'object.metadata.labels == {"app": "web", "2": "two", "tier": "front"}',
  'object.metadata.labels == {"app": "web"}',
  'object.spec.selector.matchLabels == object.spec.template.metadata.labels',
  'object.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits))',
  'object.spec.template.spec.containers.map(c, c.image)',
  'object.spec.template.spec.containers.filter(c, !has(c.securityContext))',
  'object.spec.template.spec.containers[0]',
  'object.spec.template.spec.containers[0].ports[0].containerPort == 80',
  'object.spec.template.spec.containers[5]',
  'object.spec.template.spec.volumes.size() == 0',
  'object.spec.template.spec.nodeSelector == null',
  'object.metadata.missing.field',
  'object.metadata.__proto__.kept',
  'object.spec',
  'object',
  'object.metadata.?labels.orValue({})',
  'object.metadata.labels[?"owner"].orValue("none")',
];

describe('JSON as CEL input, converted on first read', () => {
  it.each(EXPRESSIONS)('%s answers as with the whole object converted up front', (expression) => {
    const program = compileCel(expression);
    const lazy = program({ object: jsonAsCel(deployment) }, new CostTracker(unlimitedGuard()));
    const eager = program({ object: eagerlyConverted(deployment) }, new CostTracker(unlimitedGuard()));
    expect(lazy).toEqual(eager);
  });

  it('converts a field once however often it is read, and leaves the object as it was', () => {
    const before = JSON.stringify(deployment);
    const converted = jsonAsCel(deployment) as { get(key: string): unknown };
    const metadata = converted.get('metadata');
    expect(converted.get('metadata')).toBe(metadata);
    expect(JSON.stringify(deployment)).toBe(before);
  });

  it('counts each object it converts against the guard', () => {
    const guard = unlimitedGuard();
    const checkpoint = jest.spyOn(guard, 'checkpoint');
    const converted = jsonAsCel(deployment, guard) as { get(key: string): unknown };
    expect(checkpoint).toHaveBeenCalledTimes(1);
    converted.get('metadata');
    expect(checkpoint).toHaveBeenCalledTimes(2);
    converted.get('metadata');
    expect(checkpoint).toHaveBeenCalledTimes(2);
  });
});
