import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ISOLATED_PARSING_LIMITS, parseManifestIsolated } from './isolated-parsing';
import { parseManifest } from './manifest-parsing';
import { MANIFEST_LIMITS } from './yaml-documents';

// Hostile and odd YAML (issue 13 items 2 and 3, issue 15 item 7): every text is read within fixed
// limits, in time linear in its size, and what Kubernetes' own YAML reader accepts is accepted.

function configMapWithKeys(count: number, valueLength = 1): string {
  const value = 'v'.repeat(valueLength);
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: many-keys', 'data:'];
  for (let key = 0; key < count; key++) lines.push(`  k${key}: ${value}`);
  return lines.join('\n') + '\n';
}

// The bounds are on the CPU the parse takes, far above what a linear parse takes (tens of ms) and
// far below what the quadratic reads took (seconds): CPU time, unlike the wall clock, does not grow
// when other processes share the machine.
function timed<T>(work: () => T): { result: T; cpuMs: number } {
  const started = process.cpuUsage();
  const result = work();
  const { user, system } = process.cpuUsage(started);
  return { result, cpuMs: (user + system) / 1000 };
}

describe('parseManifest limits', () => {
  it('stops at the document limit quickly instead of rescanning the file per document', () => {
    // 40,000 empty documents (160 KB) took 7.6 s when each document's line was counted from the
    // start of the file.
    const { result, cpuMs } = timed(() => parseManifest('empty.yaml', '---\n'.repeat(40_000)));
    expect(result.problems).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/more than 5000 documents/) }),
    ]);
    expect(cpuMs).toBeLessThan(3000);
  });

  it('gives the right line to documents deep in a long file', () => {
    const documents = Array.from(
      { length: 2000 },
      (_, index) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${index}\n`,
    );
    const content = documents.join('---\n') + '---\nkind: ConfigMap\n';
    const parsed = parseManifest('long.yaml', content);
    expect(parsed.objects).toHaveLength(2000);
    expect(parsed.problems).toEqual([
      { file: 'long.yaml', line: 2000 * 5 + 1, message: 'object has no apiVersion or kind' },
    ]);
  });

  it('refuses a mapping with more keys than the limit, with a clear message, in linear time', () => {
    const { result, cpuMs } = timed(() =>
      parseManifest('big.yaml', configMapWithKeys(MANIFEST_LIMITS.maxCollectionEntries * 4)),
    );
    expect(result.objects).toEqual([]);
    expect(result.problems[0].message).toMatch(/more than 10000 entries/);
    // The library's pairwise duplicate-key check took 21.6 s for these 40,000 keys.
    expect(cpuMs).toBeLessThan(5000);
  });

  it('reads a mapping just under the key limit and still reports duplicate keys', () => {
    const parsed = parseManifest('ok.yaml', configMapWithKeys(MANIFEST_LIMITS.maxCollectionEntries - 10));
    expect(parsed.problems).toEqual([]);
    expect(Object.keys(parsed.objects[0].data as object)).toHaveLength(
      MANIFEST_LIMITS.maxCollectionEntries - 10,
    );
    const duplicate = parseManifest(
      'dup.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: 1, x: 2}\n',
    );
    expect(duplicate.problems).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/duplicate key "x"/) }),
    ]);
  });

  it('refuses a 100,000-deep flow sequence without overflowing the stack', () => {
    const deep = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`;
    const parsed = parseManifest('deep.yaml', deep);
    expect(parsed.problems).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/nests deeper than 100 levels/) }),
    ]);
  });

  it('refuses a billion-laughs alias bomb', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let level = 1; level < 10; level++) {
      const previous = String.fromCharCode(97 + level - 1);
      const name = String.fromCharCode(97 + level);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]`);
    }
    const parsed = parseManifest('bomb.yaml', levels.join('\n'));
    expect(parsed.objects).toEqual([]);
    expect(parsed.problems[0].message).toMatch(/alias/);
  });

  it('reports a tab-indented document and keeps the good documents of the same file', () => {
    const content =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: tabbed\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n';
    const parsed = parseManifest('tab.yaml', content);
    expect(parsed.objects.map((object) => object.metadata?.name)).toEqual(['fine']);
    expect(parsed.problems).toEqual([
      expect.objectContaining({ line: 4, message: expect.stringMatching(/[Tt]ab/) }),
    ]);
  });
});

describe('YAML that Kubernetes accepts', () => {
  const multiline = [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: multiline-quoted',
    '  annotations:',
    '    example.com/description: "When set to `true` the check is optional, defaults',
    '    to false."',
    'data:',
    '  note: "continued',
    '  at the same indentation"',
    '---',
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: second',
    '',
  ].join('\n');

  it('accepts a double-quoted scalar continued at its key indentation, as kubectl apply does', () => {
    const parsed = parseManifest('multiline.yaml', multiline);
    expect(parsed.problems).toEqual([]);
    expect(parsed.objects.map((object) => object.metadata?.name)).toEqual(['multiline-quoted', 'second']);
    expect(parsed.objects[0].metadata?.annotations).toEqual({
      'example.com/description': 'When set to `true` the check is optional, defaults to false.',
    });
    expect(parsed.objects[0].data).toEqual({ note: 'continued at the same indentation' });
    // Lines still point at each document.
    const third = parseManifest('m.yaml', multiline + '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n');
    expect(third.problems).toEqual([{ file: 'm.yaml', line: 17, message: 'ConfigMap has no metadata.name' }]);
  });

  it('accepts the real-world Gatekeeper-style file that was reported as "Missing closing quote"', () => {
    const file = '/work/shared/realworld/policies/ours/multiline-quoted.yaml';
    let content: string;
    try {
      content = readFileSync(file, 'utf8');
    } catch {
      return; // the shared corpus is not on every machine; the inline case above covers it
    }
    const parsed = parseManifest(path.basename(file), content);
    expect(parsed.problems).toEqual([]);
    expect(parsed.objects).toHaveLength(1);
  });

  it('still refuses a quote that is really never closed', () => {
    const parsed = parseManifest('open.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "open\n');
    expect(parsed.objects).toEqual([]);
    expect(parsed.problems[0].message).toMatch(/quote/);
  });

  it('does not let the lenient reader expand aliases without limit', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: "open',
      'quote"',
    ].join('\n');
    const parsed = parseManifest('bomb-and-quote.yaml', bomb);
    expect(parsed.objects).toEqual([]);
    expect(parsed.problems.length).toBeGreaterThan(0);
  });
});

describe('parseManifestIsolated', () => {
  it('parses a large text in a worker with the same result as in-process', async () => {
    const content = configMapWithKeys(2000, 20);
    expect(Buffer.byteLength(content)).toBeGreaterThan(ISOLATED_PARSING_LIMITS.inProcessMaxBytes);
    const isolated = await parseManifestIsolated('big.yaml', content);
    expect(isolated).toEqual(parseManifest('big.yaml', content));
  });

  it('keeps the event loop free while a 1 MiB manifest is parsed', async () => {
    const content = configMapWithKeys(9000, 110);
    expect(Buffer.byteLength(content)).toBeGreaterThan(1000 * 1024);
    // A timer chain runs beside the parse; its longest gap is compared with the parse's duration.
    // In-process, the parse holds the loop for all of it (one gap as long as the parse); in a
    // worker the loop keeps turning. Both sides stretch alike when the machine is busy, unlike a
    // bound in ms; and unlike the loop's utilisation, work from elsewhere in the test process
    // (a collection, another suite's leftovers) does not count against the parse.
    const ticks: number[] = [];
    let turning = true;
    const tick = () => {
      ticks.push(performance.now());
      if (turning) setTimeout(tick, 2);
    };
    const started = performance.now();
    tick();
    const parsed = await parseManifestIsolated('huge.yaml', content);
    turning = false;
    const ended = performance.now();
    const moments = [...ticks, ended];
    const longestGap = Math.max(...moments.slice(1).map((moment, index) => moment - moments[index]));
    expect(parsed.problems).toEqual([]);
    expect(moments.length).toBeGreaterThan(3);
    expect(longestGap / (ended - started)).toBeLessThan(0.5);
  });
});
