import { gunzipSync } from 'node:zlib';

// One file out of an OPA bundle (`opa build` writes a gzipped tar). The format is fixed and tiny
// (512-byte ustar headers, name at 0, octal size at 124, content padded to 512), so it is read here
// rather than through a tar library for one member.

const BLOCK = 512;

function field(header: Buffer, start: number, length: number): string {
  const raw = header.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? raw.length : end).toString('utf8');
}

/** The content of `wanted` (leading `/` or `./` ignored), or undefined when the bundle lacks it. */
export function fileInBundle(bundle: Buffer, wanted: string): Buffer | undefined {
  const archive = gunzipSync(bundle);
  const target = wanted.replace(/^\.?\//, '');
  for (let offset = 0; offset + BLOCK <= archive.length;) {
    const header = archive.subarray(offset, offset + BLOCK);
    const name = field(header, 0, 100);
    if (name === '') return undefined;
    const prefix = field(header, 345, 155);
    const size = parseInt(field(header, 124, 12).trim() || '0', 8);
    const start = offset + BLOCK;
    const fullName = (prefix ? `${prefix}/${name}` : name).replace(/^\.?\//, '');
    if (fullName === target) return archive.subarray(start, start + size);
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  return undefined;
}
