// Reading and writing the parts of the WebAssembly binary format (version 1) that fuel metering
// (wasm-fuel.ts) needs: sections, LEB128 integers, instruction immediates, the type, function and
// import sections' counts. https://webassembly.github.io/spec/core/binary/

export class WasmFuelError extends Error {}

export const SECTION_TYPE = 1;
export const SECTION_IMPORT = 2;
export const SECTION_FUNCTION = 3;
export const SECTION_GLOBAL = 6;
export const SECTION_EXPORT = 7;
export const SECTION_CODE = 10;
/** Where a new global section goes: the first known section that must follow it. */
export const SECTIONS_AFTER_GLOBAL = new Set([7, 8, 9, 10, 11, 12]);

export class Reader {
  constructor(
    readonly bytes: Uint8Array,
    public at = 0,
  ) {}

  byte(): number {
    if (this.at >= this.bytes.length) throw new WasmFuelError('the module ends early');
    return this.bytes[this.at++];
  }

  unsigned(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = this.byte();
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
      if (shift > 35) throw new WasmFuelError('an integer is too long');
    }
  }

  /** Skips a signed LEB128 of at most `bits`. */
  skipSigned(bits: number): void {
    for (let read = 0; ; read += 7) {
      if (read > bits + 7) throw new WasmFuelError('an integer is too long');
      if ((this.byte() & 0x80) === 0) return;
    }
  }

  skip(count: number): void {
    if (this.at + count > this.bytes.length) throw new WasmFuelError('the module ends early');
    this.at += count;
  }
}

export function unsignedBytes(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

export function signedBytes(value: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const BLOCK_VALUE_TYPES = new Set([0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f]);

export function skipBlockType(reader: Reader): void {
  const first = reader.bytes[reader.at];
  if (BLOCK_VALUE_TYPES.has(first)) reader.skip(1);
  else reader.skipSigned(33);
}

export function skipMemoryArgument(reader: Reader): void {
  const align = reader.unsigned();
  if (align & 0x40) reader.unsigned();
  reader.unsigned();
}

/** The number of parameters of each defined function, by its index among defined functions. */
export function parameterCounts(bytes: Uint8Array, sections: Section[]): number[] {
  const typeSection = sections.find((section) => section.id === SECTION_TYPE);
  const functionSection = sections.find((section) => section.id === SECTION_FUNCTION);
  const types: number[] = [];
  if (typeSection) {
    const reader = new Reader(bytes, typeSection.start);
    const count = reader.unsigned();
    for (let index = 0; index < count; index++) {
      if (reader.byte() !== 0x60) throw new WasmFuelError('a type that is not a function type');
      const parameters = reader.unsigned();
      reader.skip(parameters);
      reader.skip(reader.unsigned());
      types.push(parameters);
    }
  }
  const counts: number[] = [];
  if (functionSection) {
    const reader = new Reader(bytes, functionSection.start);
    const count = reader.unsigned();
    for (let index = 0; index < count; index++) counts.push(types[reader.unsigned()] ?? 0);
  }
  return counts;
}

/** How many functions and globals the module imports (they come first in their index spaces). */
export function importCounts(bytes: Uint8Array, sections: Section[]): { functions: number; globals: number } {
  const section = sections.find((each) => each.id === SECTION_IMPORT);
  if (!section) return { functions: 0, globals: 0 };
  const reader = new Reader(bytes, section.start);
  const count = reader.unsigned();
  let globals = 0;
  let functions = 0;
  for (let index = 0; index < count; index++) {
    reader.skip(reader.unsigned());
    reader.skip(reader.unsigned());
    const kind = reader.byte();
    if (kind === 0x00) {
      reader.unsigned();
      functions++;
    } else if (kind === 0x01) {
      reader.skip(1);
      const flags = reader.unsigned();
      reader.unsigned();
      if (flags & 1) reader.unsigned();
    } else if (kind === 0x02) {
      const flags = reader.unsigned();
      reader.unsigned();
      if (flags & 1) reader.unsigned();
    } else if (kind === 0x03) {
      reader.skip(2);
      globals++;
    } else throw new WasmFuelError(`an import of kind ${kind}`);
  }
  return { functions, globals };
}

export interface Section {
  id: number;
  /** First byte of the content. */
  start: number;
  end: number;
}

export function sectionsOf(bytes: Uint8Array): Section[] {
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (bytes.length < 8 || magic.some((byte, index) => bytes[index] !== byte))
    throw new WasmFuelError('not a WebAssembly module (version 1)');
  const reader = new Reader(bytes, 8);
  const sections: Section[] = [];
  while (reader.at < bytes.length) {
    const id = reader.byte();
    const size = reader.unsigned();
    const start = reader.at;
    reader.skip(size);
    sections.push({ id, start, end: reader.at });
  }
  return sections;
}

export function section(id: number, content: number[] | Uint8Array[]): Uint8Array[] {
  const parts = content.length > 0 && content[0] instanceof Uint8Array ? (content as Uint8Array[]) : [];
  const body = parts.length > 0 ? parts : [Uint8Array.from(content as number[])];
  const size = body.reduce((total, part) => total + part.length, 0);
  return [Uint8Array.from([id, ...unsignedBytes(size)]), ...body];
}

/**
 * Skips the immediates of an instruction that is not a block, loop, if, else, end, memory.grow or
 * 0xfc-prefixed; returns its weight in instructions (br_table counts its targets by eights).
 */
export function skipImmediates(reader: Reader, opcode: number): number {
  switch (opcode) {
    case 0x0c:
    case 0x0d:
    case 0x10:
    case 0x12:
    case 0x20:
    case 0x21:
    case 0x22:
    case 0x23:
    case 0x24:
    case 0x25:
    case 0x26:
    case 0x3f:
    case 0xd2:
      reader.unsigned();
      return 1;
    case 0x0e: {
      const targets = reader.unsigned();
      for (let index = 0; index <= targets; index++) reader.unsigned();
      return 1 + Math.ceil(targets / 8);
    }
    case 0x11:
    case 0x13:
      reader.unsigned();
      reader.unsigned();
      return 1;
    case 0x1c:
      reader.skip(reader.unsigned());
      return 1;
    case 0x41:
      reader.skipSigned(32);
      return 1;
    case 0x42:
      reader.skipSigned(64);
      return 1;
    case 0x43:
      reader.skip(4);
      return 1;
    case 0x44:
      reader.skip(8);
      return 1;
    case 0xd0:
      reader.skip(1);
      return 1;
  }
  if (opcode === 0x00 || opcode === 0x01 || opcode === 0x0f) return 1;
  if (opcode === 0x1a || opcode === 0x1b || opcode === 0xd1) return 1;
  if (opcode >= 0x45 && opcode <= 0xc4) return 1;
  if (opcode >= 0x28 && opcode <= 0x3e) {
    skipMemoryArgument(reader);
    return 1;
  }
  throw new WasmFuelError(`instruction 0x${opcode.toString(16)} is not one this host meters`);
}

/** Skips the immediates of a 0xfc-prefixed instruction (saturating truncation, bulk memory, tables). */
export function skipPrefixedImmediates(reader: Reader, sub: number): void {
  if (sub <= 7) return;
  if (sub === 8 || sub === 10 || sub === 12 || sub === 14) {
    reader.unsigned();
    reader.unsigned();
  } else if (sub <= 17) reader.unsigned();
  else throw new WasmFuelError(`unknown instruction 0xfc ${sub}`);
}
