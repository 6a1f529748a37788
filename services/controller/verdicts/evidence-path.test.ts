import fc from 'fast-check';
import { isRecord } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import {
  SECRET_FIELD_NAME,
  SECRET_PARAM_DEPLOYMENT,
  SECRET_PARAM_OBJECTS,
  SECRET_PARAM_VALUE,
} from '../../../test/support/secret-param-policy';
import type { DetailLevel } from '../../model/api';
import { buildAdmissionCheck } from './admission-check';
import { pathWithinObject } from './evidence-path';

// Issue 27: at levels that hide a policy, an evidence path built from its CEL named a field the
// object does not have (`spec.template.spec.secretFieldName`). Paths are cut back to what the object has.

describe('pathWithinObject', () => {
  const object = {
    metadata: { labels: { 'app.kubernetes.io/name': 'web', app: 'web' } },
    spec: { template: { spec: { containers: [{ name: 'web', resources: {} }] } } },
  };

  it.each([
    [
      'a path the object has, whole',
      'spec.template.spec.containers[0].resources',
      'spec.template.spec.containers[0].resources',
    ],
    [
      'a field the object lacks, cut to its parent',
      'spec.template.spec.secretFieldName',
      'spec.template.spec',
    ],
    ['an index past the end', 'spec.template.spec.containers[3].image', 'spec.template.spec.containers'],
    [
      'a key under a list element the object lacks',
      'spec.template.spec.containers[0].securityContext.runAsUser',
      'spec.template.spec.containers[0]',
    ],
    [
      'a label key with dots',
      'metadata.labels.app.kubernetes.io/name',
      'metadata.labels.app.kubernetes.io/name',
    ],
    [
      'a quoted key',
      'metadata.labels["app.kubernetes.io/name"]',
      'metadata.labels["app.kubernetes.io/name"]',
    ],
    ['a quoted key the object lacks', 'metadata.labels["team.example.com/secret"]', 'metadata.labels'],
    ['a first field the object lacks', 'secretTopLevel.x', ''],
    ['a path that indexes a record', 'metadata[0]', 'metadata'],
    ['the empty path', '', ''],
  ])('keeps %s', (_label, path, expected) => {
    expect(pathWithinObject(object, path)).toBe(expected);
  });
});

// Keys the generators use: no separators or quotes, so a walk spells one path unambiguously.
const plainKey = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,8}$/);
const objectValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(plainKey, tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** A path the object has, chosen by `choices` (indexes into the keys or elements met on the way). */
function walk(object: unknown, choices: number[]): string {
  let path = '';
  let current = object;
  for (const choice of choices) {
    if (Array.isArray(current) && current.length > 0) {
      const at = choice % current.length;
      path += `[${at}]`;
      current = current[at];
    } else if (isRecord(current) && Object.keys(current).length > 0) {
      const keys = Object.keys(current);
      const key = keys[choice % keys.length] as string;
      path += path === '' ? key : `.${key}`;
      current = current[key];
    } else break;
  }
  return path;
}

function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((element) => keysOf(element, into));
  else if (isRecord(value))
    for (const [key, element] of Object.entries(value)) {
      into.add(key);
      keysOf(element, into);
    }
  return into;
}

describe('pathWithinObject on random objects', () => {
  const choices = fc.array(fc.nat(), { maxLength: 6 });

  it('keeps a path the object has whole', () => {
    fc.assert(
      fc.property(objectValue, choices, (object, picks) => {
        const path = walk(object, picks);
        expect(pathWithinObject(object, path)).toBe(path);
      }),
    );
  });

  it('never names a field the object lacks: what it keeps is a prefix the object has', () => {
    fc.assert(
      fc.property(
        objectValue,
        choices,
        fc.array(
          fc.oneof(
            plainKey.map((key) => `.zz${key}`),
            fc.nat(9).map((at) => `[${at}]`),
          ),
          {
            minLength: 1,
            maxLength: 3,
          },
        ),
        (object, picks, policyTail) => {
          const known = walk(object, picks);
          const path = `${known}${policyTail.join('')}`.replace(/^\./, '');
          const kept = pathWithinObject(object, path);
          expect(path.startsWith(kept)).toBe(true);
          expect(kept.length).toBeGreaterThanOrEqual(known.length);
          expect(pathWithinObject(object, kept)).toBe(kept);
          // The invented `zz` keys are in no object: none survives.
          const present = keysOf(object);
          for (const segment of kept.split(/[.[\]]/))
            if (segment.startsWith('zz')) expect(present).toContain(segment);
        },
      ),
    );
  });
});

describe('admission-check evidence paths by level', () => {
  const cluster = indexObjects(SECRET_PARAM_OBJECTS);
  const check = (level: DetailLevel) =>
    buildAdmissionCheck(
      cluster.index,
      { object: SECRET_PARAM_DEPLOYMENT, operation: 'CREATE' },
      { viewer: { level } },
    );

  it.each(['summary', 'detailed'] as const)(
    'at %s, where the cluster-scoped policy is hidden, the paths name only fields the object has',
    (level) => {
      const paths = check(level).constraints.flatMap((entry) => entry.evidence.map((item) => item.path));
      expect(paths).toEqual(['spec.template.spec.containers[0]', 'spec.template.spec']);
    },
  );

  it('at summary, nothing the policy reads or holds shows anywhere (messages are details from detailed on)', () => {
    const text = JSON.stringify(check('summary'));
    expect(text).not.toContain(SECRET_FIELD_NAME);
    expect(text).not.toContain(SECRET_PARAM_VALUE);
  });

  it('at full, keeps the path the policy reads (the webhook and the policy owner may see it)', () => {
    const paths = check('full').constraints.flatMap((entry) => entry.evidence.map((item) => item.path));
    expect(paths).toEqual(['spec.template.spec.containers[0]', `spec.template.spec.${SECRET_FIELD_NAME}`]);
  });
});
