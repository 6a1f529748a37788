import { readFileSync } from 'node:fs';

// The `--reference-key-file` of the opaque references (model/opaque-reference.ts).

/**
 * The key file's bytes as they are, less ASCII whitespace at either end: read as UTF-8, every
 * invalid byte of a binary key (`head -c 32 /dev/urandom`) became U+FFFD, so two different keys could
 * give the same references (issue 32, row 14). A text key gives the same bytes as before.
 */
function withoutSurroundingWhitespace(bytes: Buffer): Buffer {
  const isSpace = (byte: number | undefined) =>
    byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0x0b || byte === 0x0c;
  let start = 0;
  let end = bytes.length;
  while (start < end && isSpace(bytes[start])) start++;
  while (end > start && isSpace(bytes[end - 1])) end--;
  return bytes.subarray(start, end);
}

/** The key in the file (its bytes, surrounding whitespace dropped, so a Secret written with a newline works). */
export function readReferenceKeyFile(file: string): Buffer {
  return withoutSurroundingWhitespace(readFileSync(file));
}
