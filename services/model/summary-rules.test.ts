import {
  assertReadableLine,
  collapseRepeatedPlaceholders,
  joinLimited,
  joinLimitedStrings,
  kindsInPlural,
  pluralKind,
  readableLine,
  readableTextViolations,
  renderReadableLine,
  summariseParameters,
} from './summary-rules';
import { detail, objectName, renderFullText, text } from './text';

describe('summary helpers', () => {
  it('puts kinds in the plural as the Kubernetes API does', () => {
    expect(['Pod', 'Service', 'Ingress', 'NetworkPolicy', 'Endpoints', 'Pod exec'].map(pluralKind)).toEqual([
      'Pods',
      'Services',
      'Ingresses',
      'NetworkPolicies',
      'Endpoints',
      'Pods (exec)',
    ]);
    expect(kindsInPlural(['Deployment', 'Pod', 'StatefulSet'])).toBe('Deployments, Pods and StatefulSets');
    expect(kindsInPlural(['*'])).toBe('resources');
  });

  it('summarises parameters as names and short values, never JSON', () => {
    const summary = summariseParameters({
      labels: [{ key: 'owner', allowedRegex: '^[a-z]+@example\\.com$' }],
      allowedCapabilities: ['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD'],
      runAsUser: { rule: 'MustRunAs', ranges: [{ min: 1, max: 2 }] },
      cpu: '200m',
    });
    expect(summary).toBe('allowedCapabilities 7 values; cpu 200m; labels owner; runAsUser 2 settings');
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`p${index}`, index]));
    expect(summariseParameters(many)).toMatch(/ and \d+ more$/);
    expect(summariseParameters(many).length).toBeLessThan(140);
  });

  it('collapses repeated placeholders into a count', () => {
    expect(
      collapseRepeatedPlaceholders('from a principal or a principal or a principal', ['a principal']),
    ).toBe('from 3 principals');
    expect(collapseRepeatedPlaceholders('namespaces redacted, redacted, redacted', [])).toBe(
      'namespaces 3 redacted names',
    );
    expect(collapseRepeatedPlaceholders('in redacted', [])).toBe('in redacted');
  });

  it('makes one line of at most 300 characters, cut at a word', () => {
    const line = readableLine(`first line\n  second\tline ${'word '.repeat(100)}`);
    expect(line.startsWith('first line second line word')).toBe(true);
    expect(line.length).toBeLessThanOrEqual(300);
    expect(line.endsWith('…')).toBe(true);
  });

  it('renders a Text for a viewer with its own placeholders collapsed', () => {
    const value = text`from ${detail('a', 'a principal')} or ${detail('b', 'a principal')} in ${objectName('x', 'other')}`;
    expect(renderReadableLine(value, { level: 'summary', namespace: 'shop' })).toBe(
      'from 2 principals in redacted',
    );
    expect(renderReadableLine(value, { level: 'full', namespace: 'shop' })).toBe('from a or b in x');
  });

  it('cuts long lists with a counted rest', () => {
    expect(joinLimitedStrings(['a', 'b', 'c', 'd', 'e', 'f'])).toBe('a, b, c, d and 2 more');
    expect(renderFullText(joinLimited([['x'], ['y'], ['z']], ' or ', 2, 'rule'))).toBe(
      'x or y and 1 more rule',
    );
    expect(renderFullText(joinLimited([['x'], ['y'], ['z'], ['w']], ' or ', 2, 'rule'))).toBe(
      'x or y and 2 more rules',
    );
  });
});

describe('readableTextViolations', () => {
  it('accepts a clean line, and "be undefined" in a policy message', () => {
    expect(
      readableTextViolations('Gatekeeper K8sBlockNodePort constraint "x" rejects Services that violate it'),
    ).toEqual([]);
    expect(readableTextViolations('the field must be undefined or false')).toEqual([]);
  });

  it('names every broken rule', () => {
    expect(readableTextViolations('a\nb ')).toEqual([
      'holds a line break',
      'has leading or trailing whitespace',
    ]);
    expect(readableTextViolations('x'.repeat(301))).toEqual(['is 301 characters long (at most 300)']);
    expect(readableTextViolations(`parameters: {"a":"${'b'.repeat(90)}"}`)).toEqual([
      'holds a JSON-like run of more than 80 characters',
    ]);
    expect(readableTextViolations('namespaces redacted, redacted')).toEqual(['repeats a placeholder']);
    expect(readableTextViolations('from a principal or a principal or a principal')).toEqual([
      'repeats a placeholder',
    ]);
    expect(readableTextViolations('Gatekeeper constraint "x" rejects Service that violate it')).toEqual([
      'names a kind in the singular where it means all of them',
    ]);
    expect(readableTextViolations('limits undefined: [object Object]')).toEqual([
      'leaks a value from code (undefined, [object Object], NaN)',
    ]);
  });

  it('throws with the place and the problems', () => {
    expect(() => assertReadableLine('a\nb', 'shop/x summary')).toThrow(
      /shop\/x summary: "a\\nb" holds a line break/,
    );
  });
});
