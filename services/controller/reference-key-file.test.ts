import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readReferenceKeyFile } from './reference-key-file';

describe('readReferenceKeyFile', () => {
  let directory: string;
  beforeAll(async () => (directory = await mkdtemp(path.join(tmpdir(), 'forewarn-key-'))));
  afterAll(() => rm(directory, { recursive: true, force: true }));

  async function keyOf(bytes: Buffer): Promise<Buffer> {
    const file = path.join(directory, `key-${Math.random()}`);
    await writeFile(file, bytes);
    return readReferenceKeyFile(file);
  }

  it('reads a binary key as its bytes: two different keys stay different', async () => {
    const first = Buffer.from(Array.from({ length: 32 }, (_, index) => 0x80 + index));
    const second = Buffer.from(Array.from({ length: 32 }, (_, index) => 0xa0 + index));
    expect(Buffer.from(first.toString('utf8'), 'utf8')).toEqual(Buffer.from(second.toString('utf8'), 'utf8'));
    expect(await keyOf(first)).toEqual(first);
    expect(await keyOf(second)).toEqual(second);
  });

  it('drops surrounding whitespace, as a text key written with a newline needs', async () => {
    expect((await keyOf(Buffer.from('  0123456789abcdef0123\n'))).toString('utf8')).toBe(
      '0123456789abcdef0123',
    );
  });
});
