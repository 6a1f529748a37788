import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseControllerConfig } from '../../services/controller/config';
import { startController } from '../../services/controller/runtime';
import { silentLogger } from '../../services/logging/logger';
import { CALLER_RBAC_OBJECTS } from '../support/caller-rbac-fixtures';

// Issue 32, row 14: an operator makes the reference key with `head -c 32 /dev/urandom`; the
// controller read the file as UTF-8, every invalid byte became U+FFFD, and two different binary
// keys gave identical opaque references. Two controllers with two such keys must disagree.

jest.setTimeout(60_000);

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'forewarn-key-'));
  await mkdir(path.join(directory, 'manifests'));
  await writeFile(
    path.join(directory, 'manifests', 'objects.yaml'),
    CALLER_RBAC_OBJECTS.map((object) => JSON.stringify(object)).join('\n---\n'),
  );
});
afterAll(() => rm(directory, { recursive: true, force: true }));

/** The opaque references of the summary report of `shop` under a key of these bytes. */
async function referencesWith(key: Buffer): Promise<string[]> {
  const keyFile = path.join(directory, `key-${key[0]}`);
  await writeFile(keyFile, key);
  const config = parseControllerConfig(
    [
      '--manifests',
      path.join(directory, 'manifests'),
      '--address',
      '127.0.0.1',
      '--port',
      '0',
      '--mcp=false',
    ],
    { FOREWARN_DETAIL_LEVEL: 'summary', FOREWARN_REFERENCE_KEY_FILE: keyFile },
  );
  const controller = await startController(config, silentLogger());
  try {
    const report = (await (
      await fetch(`http://127.0.0.1:${controller.port}/resources/reports/shop`)
    ).json()) as { constraints: Array<{ ref?: string }> };
    return report.constraints.flatMap((constraint) => (constraint.ref ? [constraint.ref] : []));
  } finally {
    await controller.close();
  }
}

it('two different binary keys (invalid UTF-8) give different references', async () => {
  // Every byte >= 0x80 and no valid UTF-8 sequence: both keys read as 32 U+FFFD in UTF-8.
  const first = Buffer.from(Array.from({ length: 32 }, (_, index) => 0x80 + index));
  const second = Buffer.from(Array.from({ length: 32 }, (_, index) => 0xa0 + index));
  const [firstReferences, secondReferences] = [await referencesWith(first), await referencesWith(second)];
  expect(firstReferences.length).toBeGreaterThan(0);
  expect(firstReferences).toHaveLength(secondReferences.length);
  for (const [position, reference] of firstReferences.entries())
    expect(reference).not.toBe(secondReferences[position]);
});
