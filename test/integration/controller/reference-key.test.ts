import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseControllerConfig } from '../../../services/controller/config';
import { startController } from '../../../services/controller/runtime';
import { silentLogger } from '../../../services/logging/logger';
import type { Report } from '../../../services/model/api';
import { repositoryRoot } from '../../support/controller-process';

// The per-installation key of the opaque references (--reference-key-file, e.g. a mounted Secret):
// with the same key, two controllers (replicas, or one restarted) give a redacted constraint the
// same reference; a key too short to keep references unguessable stops the start with the reason.

const DEMO = path.join(repositoryRoot, 'examples/manifests');
let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'forewarn-reference-key-'));
});

afterAll(() => rm(directory, { recursive: true, force: true }));

async function summaryRefs(keyFile: string): Promise<string[]> {
  const config = parseControllerConfig(
    [
      '--manifests',
      DEMO,
      '--address',
      '127.0.0.1',
      '--port',
      '0',
      '--mcp=false',
      '--reference-key-file',
      keyFile,
    ],
    {},
  );
  const controller = await startController(config, silentLogger());
  try {
    const response = await fetch(`http://127.0.0.1:${controller.port}/resources/reports/shop`);
    const report = (await response.json()) as Report;
    return report.constraints.flatMap((entry) => (entry.ref ? [entry.ref] : []));
  } finally {
    await controller.close();
  }
}

describe('--reference-key-file', () => {
  it('gives the same references under the same key, other ones under another key', async () => {
    const key = path.join(directory, 'key');
    await writeFile(key, 'b3c1f0a6d2e94c7f8a1b5d3e6f7a9c0d\n');
    const first = await summaryRefs(key);
    expect(first.length).toBeGreaterThan(3);
    expect(await summaryRefs(key)).toEqual(first);
    const other = path.join(directory, 'other-key');
    await writeFile(other, 'another installation, another key of 32 bytes');
    expect((await summaryRefs(other)).some((ref) => first.includes(ref))).toBe(false);
  });

  it('refuses a key shorter than 16 bytes, and a file it cannot read, naming the flag', async () => {
    const short = path.join(directory, 'short');
    await writeFile(short, 'secret\n');
    await expect(summaryRefs(short)).rejects.toThrow(
      /--reference-key-file .*short holds 6 bytes; use at least 16/,
    );
    await expect(summaryRefs(path.join(directory, 'missing'))).rejects.toThrow(
      /--reference-key-file .*missing cannot be read/,
    );
  });
});
