import { matchPattern } from './pattern';
import { scalarMatches } from './scalar-pattern';

// Kyverno's documented pattern examples (kyverno.io/docs/writing-policies/validate): wildcards,
// operators and each anchor, with a resource that passes and one that fails.

const pod = (spec: Record<string, unknown>) => ({ spec });

describe('Kyverno scalar patterns', () => {
  it.each([
    ['*:*', 'nginx:1.25', true],
    ['*:*', 'nginx', false],
    ['!*:latest', 'nginx:latest', false],
    ['!*:latest', 'nginx:1.25', true],
    ['?*', '', false],
    ['>0', 10, true],
    ['>0', 0, false],
    ['<=1Gi', '512Mi', true],
    ['<=1Gi', '2Gi', false],
    ['1-10', 5, true],
    ['1!-10', 5, false],
    ['Always|IfNotPresent', 'Never', false],
    ['Always|IfNotPresent', 'Always', true],
    ['>1 & <5', 3, true],
    [1, 1, true],
  ])('%p against %p: %p', (pattern, value, expected) => {
    expect(scalarMatches(pattern, value)).toBe(expected);
  });
});

describe('Kyverno anchors', () => {
  it('conditional: a container with a latest image must not use IfNotPresent', () => {
    const pattern = { spec: { containers: [{ '(image)': '*:latest', imagePullPolicy: '!IfNotPresent' }] } };
    expect(
      matchPattern(pattern, pod({ containers: [{ image: 'nginx:latest', imagePullPolicy: 'Always' }] })).kind,
    ).toBe('pass');
    // Kyverno skips an element whose condition does not hold, and the rule when every element is skipped.
    expect(
      matchPattern(pattern, pod({ containers: [{ image: 'nginx:1.25', imagePullPolicy: 'IfNotPresent' }] }))
        .kind,
    ).toBe('skip');
    expect(
      matchPattern(
        pattern,
        pod({
          containers: [
            { image: 'nginx:1', imagePullPolicy: 'Always' },
            { image: 'nginx:latest', imagePullPolicy: 'IfNotPresent' },
          ],
        }),
      ),
    ).toEqual({
      kind: 'fail',
      path: 'spec.containers[1].imagePullPolicy',
      value: 'IfNotPresent',
      pattern: '!IfNotPresent',
    });
  });

  it('equality: a hostPath volume, when there is one, must not mount the docker socket', () => {
    const pattern = { spec: { '=(volumes)': [{ '=(hostPath)': { path: '!/var/run/docker.sock' } }] } };
    expect(matchPattern(pattern, pod({ containers: [] })).kind).toBe('pass');
    expect(matchPattern(pattern, pod({ volumes: [{ name: 'tmp', emptyDir: {} }] })).kind).toBe('pass');
    expect(
      matchPattern(pattern, pod({ volumes: [{ name: 'd', hostPath: { path: '/var/run/docker.sock' } }] })),
    ).toMatchObject({
      kind: 'fail',
      path: 'spec.volumes[0].hostPath.path',
    });
  });

  it('existence: at least one container runs the required image', () => {
    const pattern = { spec: { '^(containers)': [{ image: 'nginx:latest' }] } };
    expect(
      matchPattern(pattern, pod({ containers: [{ image: 'busybox' }, { image: 'nginx:latest' }] })).kind,
    ).toBe('pass');
    expect(matchPattern(pattern, pod({ containers: [{ image: 'busybox' }] }))).toMatchObject({
      kind: 'fail',
      path: 'spec.containers',
    });
  });

  it('negation: no volume may be a hostPath', () => {
    const pattern = { spec: { '=(volumes)': [{ 'X(hostPath)': 'null' }] } };
    expect(matchPattern(pattern, pod({ volumes: [{ name: 'c', configMap: { name: 'x' } }] })).kind).toBe(
      'pass',
    );
    expect(matchPattern(pattern, pod({ volumes: [{ name: 'h', hostPath: { path: '/' } }] }))).toMatchObject({
      kind: 'fail',
      path: 'spec.volumes[0].hostPath',
    });
  });

  it('global: the rule is skipped when the global condition does not hold', () => {
    const pattern = {
      spec: {
        containers: [{ name: '*', '<(image)': 'someimagename' }],
        imagePullSecrets: [{ name: 'my-registry-secret' }],
      },
    };
    expect(matchPattern(pattern, pod({ containers: [{ name: 'a', image: 'other' }] })).kind).toBe('skip');
    expect(matchPattern(pattern, pod({ containers: [{ name: 'a', image: 'someimagename' }] }))).toMatchObject(
      {
        kind: 'fail',
        path: 'spec.imagePullSecrets',
      },
    );
  });

  it('a plain key must be present and match', () => {
    const pattern = { spec: { containers: [{ readinessProbe: { periodSeconds: '>0' } }] } };
    expect(matchPattern(pattern, pod({ containers: [{ name: 'a' }] }))).toMatchObject({
      kind: 'fail',
      path: 'spec.containers[0].readinessProbe',
    });
  });
});
