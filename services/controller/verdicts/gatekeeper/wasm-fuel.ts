// Fuel for a compiled template (issue 32, docs/decisions.md "Rego on the event loop, bounded by
// fuel"): a Wasm call cannot be interrupted on the event loop, so the module itself counts its
// work and stops. This adds one mutable i32 global, exported as FUEL_EXPORT, and charges it:
// - at every function entry, the instructions of the function that are outside its loops;
// - at every loop header, the instructions directly inside that loop (not in a loop nested in it);
// - before every memory.copy / memory.fill, one unit per 16 bytes they touch;
// - memory.grow weighs MEMORY_GROW_UNITS.
// Between two charge points execution only goes forward (a backward branch can only target a loop
// header, where it is charged again), so each instruction runs at most once per charge of its
// region: the charge is an upper bound of the instructions run. When the global goes below zero
// the module executes `unreachable` (a RuntimeError the caller tells from others by the global).
// Appending a defined global and an export shifts no index: no call or global reference changes,
// and the SDK's own import object still fits the module.
// Hand-written rather than through binaryen (the decision says why): the module is read once,
// instruction by instruction, and copied with the charges inserted; only the sections that change
// (global, export, code) are re-encoded. Instructions it does not know (SIMD, exceptions, GC) make
// it refuse the module (WasmFuelError), never guess.

/** The exported global the host sets before an evaluation and reads after. */
export const FUEL_EXPORT = 'forewarn_fuel';
/** memory.grow allocates and may zero pages: weighed as this many instructions. */
export const MEMORY_GROW_UNITS = 1024;
/** memory.copy / memory.fill: one unit per 2^BULK_BYTES_SHIFT bytes. */
const BULK_BYTES_SHIFT = 4;

export class WasmFuelError extends Error {}

const SECTION_TYPE = 1;
const SECTION_IMPORT = 2;
const SECTION_FUNCTION = 3;
const SECTION_GLOBAL = 6;
const SECTION_EXPORT = 7;
const SECTION_CODE = 10;
/** Where a new global section goes: the first known section that must follow it. */
const SECTIONS_AFTER_GLOBAL = new Set([7, 8, 9, 10, 11, 12]);

class Reader {
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

function unsignedBytes(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

function signedBytes(value: number): number[] {
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

const GLOBAL_GET = 0x23;
const GLOBAL_SET = 0x24;
const LOCAL_TEE = 0x22;
const LOCAL_GET = 0x20;
const I32_CONST = 0x41;

/** Subtracts what is on the stack from the fuel, and traps when it went below zero. */
function chargeTail(fuel: number): number[] {
  const global = unsignedBytes(fuel);
  return [
    0x6b, // i32.sub
    GLOBAL_SET,
    ...global,
    GLOBAL_GET,
    ...global,
    I32_CONST,
    0,
    0x48, // i32.lt_s
    0x04,
    0x40, // if (no result)
    0x00, // unreachable
    0x0b, // end
  ];
}

function staticCharge(fuel: number, units: number): number[] {
  return [GLOBAL_GET, ...unsignedBytes(fuel), I32_CONST, ...signedBytes(units), ...chargeTail(fuel)];
}

/** Before memory.copy / memory.fill: the byte count on top of the stack, kept there, is charged. */
function bulkCharge(fuel: number, scratch: number): number[] {
  const local = unsignedBytes(scratch);
  return [
    LOCAL_TEE,
    ...local,
    GLOBAL_GET,
    ...unsignedBytes(fuel),
    LOCAL_GET,
    ...local,
    I32_CONST,
    BULK_BYTES_SHIFT,
    0x76, // i32.shr_u
    ...chargeTail(fuel),
  ];
}

const BLOCK_VALUE_TYPES = new Set([0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f]);

function skipBlockType(reader: Reader): void {
  const first = reader.bytes[reader.at];
  if (BLOCK_VALUE_TYPES.has(first)) reader.skip(1);
  else reader.skipSigned(33);
}

function skipMemoryArgument(reader: Reader): void {
  const align = reader.unsigned();
  if (align & 0x40) reader.unsigned();
  reader.unsigned();
}

/** A function body's pieces: original bytes, and charges whose units are known at their region's end. */
type Piece = Uint8Array | { region: number } | { bulk: true };

interface Body {
  pieces: Piece[];
  costs: number[];
  usesBulk: boolean;
}

/** Reads one function's instructions (reader at the first instruction) up to its final `end`. */
function readInstructions(reader: Reader, end: number): Body {
  const pieces: Piece[] = [{ region: 0 }];
  const costs = [0];
  // Each open block: the region its instructions are counted in (a loop opens a region of its own).
  const frames: number[] = [0];
  let copiedFrom = reader.at;
  let usesBulk = false;
  const cut = (until: number) => {
    if (until > copiedFrom) pieces.push(reader.bytes.subarray(copiedFrom, until));
    copiedFrom = until;
  };
  while (frames.length > 0) {
    if (reader.at >= end) throw new WasmFuelError('a function body ends inside a block');
    const region = frames[frames.length - 1];
    const start = reader.at;
    const opcode = reader.byte();
    let units = 1;
    switch (opcode) {
      case 0x02: // block
      case 0x04: // if
        skipBlockType(reader);
        frames.push(region);
        break;
      case 0x03: // loop
        skipBlockType(reader);
        cut(reader.at);
        frames.push(costs.length);
        pieces.push({ region: costs.length });
        costs.push(0);
        break;
      case 0x0b: // end
        frames.pop();
        break;
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
      case 0xd2:
        reader.unsigned();
        break;
      case 0x0e: {
        const targets = reader.unsigned();
        for (let index = 0; index <= targets; index++) reader.unsigned();
        units = 1 + Math.ceil(targets / 8);
        break;
      }
      case 0x11:
      case 0x13:
        reader.unsigned();
        reader.unsigned();
        break;
      case 0x1c: {
        const types = reader.unsigned();
        reader.skip(types);
        break;
      }
      case 0x3f:
        reader.unsigned();
        break;
      case 0x40:
        reader.unsigned();
        units = MEMORY_GROW_UNITS;
        break;
      case 0x41:
        reader.skipSigned(32);
        break;
      case 0x42:
        reader.skipSigned(64);
        break;
      case 0x43:
        reader.skip(4);
        break;
      case 0x44:
        reader.skip(8);
        break;
      case 0xd0:
        reader.skip(1);
        break;
      case 0xfc: {
        const sub = reader.unsigned();
        if (sub <= 7) break;
        if (sub === 10 || sub === 11) {
          // memory.copy / memory.fill: the byte count is on top of the stack now.
          cut(start);
          pieces.push({ bulk: true });
          usesBulk = true;
          if (sub === 10) reader.unsigned();
          reader.unsigned();
          break;
        }
        if (sub === 8 || sub === 12 || sub === 14) {
          reader.unsigned();
          reader.unsigned();
        } else if (sub <= 17) reader.unsigned();
        else throw new WasmFuelError(`unknown instruction 0xfc ${sub}`);
        break;
      }
      default:
        if (opcode === 0x00 || opcode === 0x01 || opcode === 0x05 || opcode === 0x0f) break;
        if (opcode === 0x1a || opcode === 0x1b || opcode === 0xd1) break;
        if (opcode >= 0x28 && opcode <= 0x3e) {
          skipMemoryArgument(reader);
          break;
        }
        if (opcode >= 0x45 && opcode <= 0xc4) break;
        throw new WasmFuelError(`instruction 0x${opcode.toString(16)} is not one this host meters`);
    }
    costs[region] += units;
  }
  if (reader.at !== end) throw new WasmFuelError('a function body has bytes after its end');
  cut(reader.at);
  return { pieces, costs, usesBulk };
}

/** The number of parameters of each defined function, by its index among defined functions. */
function parameterCounts(bytes: Uint8Array, sections: Section[]): number[] {
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

function importedGlobals(bytes: Uint8Array, sections: Section[]): number {
  const section = sections.find((each) => each.id === SECTION_IMPORT);
  if (!section) return 0;
  const reader = new Reader(bytes, section.start);
  const count = reader.unsigned();
  let globals = 0;
  for (let index = 0; index < count; index++) {
    reader.skip(reader.unsigned());
    reader.skip(reader.unsigned());
    const kind = reader.byte();
    if (kind === 0x00) reader.unsigned();
    else if (kind === 0x01) {
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
  return globals;
}

interface Section {
  id: number;
  /** First byte of the content. */
  start: number;
  end: number;
}

function sectionsOf(bytes: Uint8Array): Section[] {
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

function section(id: number, content: number[] | Uint8Array[]): Uint8Array[] {
  const parts = content.length > 0 && content[0] instanceof Uint8Array ? (content as Uint8Array[]) : [];
  const body = parts.length > 0 ? parts : [Uint8Array.from(content as number[])];
  const size = body.reduce((total, part) => total + part.length, 0);
  return [Uint8Array.from([id, ...unsignedBytes(size)]), ...body];
}

/** The code section with every body metered; `fuel`: the fuel global's index. */
function meteredCode(bytes: Uint8Array, code: Section, fuel: number, parameters: number[]): Uint8Array[] {
  const reader = new Reader(bytes, code.start);
  const count = reader.unsigned();
  const out: Uint8Array[] = [Uint8Array.from(unsignedBytes(count))];
  for (let index = 0; index < count; index++) {
    const size = reader.unsigned();
    const end = reader.at + size;
    const localsStart = reader.at;
    const groups = reader.unsigned();
    const groupsStart = reader.at;
    let locals = parameters[index] ?? 0;
    for (let group = 0; group < groups; group++) {
      locals += reader.unsigned();
      reader.skip(1);
    }
    const localsEnd = reader.at;
    const body = readInstructions(reader, end);
    // A function with memory.copy / memory.fill gets one more i32 local (the last: no index moves).
    const header = body.usesBulk
      ? [
          Uint8Array.from(unsignedBytes(groups + 1)),
          bytes.subarray(groupsStart, localsEnd),
          Uint8Array.from([1, 0x7f]),
        ]
      : [bytes.subarray(localsStart, localsEnd)];
    const parts: Uint8Array[] = [...header];
    for (const piece of body.pieces) {
      if (piece instanceof Uint8Array) parts.push(piece);
      else if ('region' in piece) parts.push(Uint8Array.from(staticCharge(fuel, body.costs[piece.region])));
      else parts.push(Uint8Array.from(bulkCharge(fuel, locals)));
    }
    const bodySize = parts.reduce((total, part) => total + part.length, 0);
    out.push(Uint8Array.from(unsignedBytes(bodySize)), ...parts);
  }
  if (reader.at !== code.end) throw new WasmFuelError('the code section has bytes after its bodies');
  return section(SECTION_CODE, out);
}

/** The section's entries as they are, with `extra` appended and the count raised. */
function appended(bytes: Uint8Array, existing: Section | undefined, id: number, extra: number[]): Uint8Array[] {
  if (!existing) return section(id, [1, ...extra]);
  const reader = new Reader(bytes, existing.start);
  const count = reader.unsigned();
  return section(id, [
    Uint8Array.from([...unsignedBytes(count + 1)]),
    bytes.subarray(reader.at, existing.end),
    Uint8Array.from(extra),
  ]);
}

/**
 * The module with fuel metering; the fuel global starts at `initialFuel` (what the SDK's loading
 * calls may spend before the host sets it). Throws WasmFuelError for a module it cannot meter.
 */
export function meterWasmFuel(bytes: Uint8Array, initialFuel: number): Uint8Array {
  const sections = sectionsOf(bytes);
  const globalSection = sections.find((each) => each.id === SECTION_GLOBAL);
  const definedGlobals = globalSection ? new Reader(bytes, globalSection.start).unsigned() : 0;
  const fuel = importedGlobals(bytes, sections) + definedGlobals;
  const parameters = parameterCounts(bytes, sections);
  const name = new TextEncoder().encode(FUEL_EXPORT);
  const newGlobal = [0x7f, 0x01, I32_CONST, ...signedBytes(initialFuel), 0x0b];
  const newExport = [...unsignedBytes(name.length), ...name, 0x03, ...unsignedBytes(fuel)];
  const out: Uint8Array[] = [bytes.subarray(0, 8)];
  let globalWritten = false;
  let exportWritten = false;
  const writeGlobal = () => {
    if (globalWritten) return;
    out.push(...appended(bytes, globalSection, SECTION_GLOBAL, newGlobal));
    globalWritten = true;
  };
  const writeExport = (existing?: Section) => {
    if (exportWritten) return;
    out.push(...appended(bytes, existing, SECTION_EXPORT, newExport));
    exportWritten = true;
  };
  let sawCode = false;
  for (const each of sections) {
    if (SECTIONS_AFTER_GLOBAL.has(each.id)) writeGlobal();
    if (each.id > SECTION_EXPORT && each.id !== 0 && each.id !== 13) writeExport();
    if (each.id === SECTION_GLOBAL) writeGlobal();
    else if (each.id === SECTION_EXPORT) writeExport(each);
    else if (each.id === SECTION_CODE) {
      out.push(...meteredCode(bytes, each, fuel, parameters));
      sawCode = true;
    } else {
      out.push(Uint8Array.from([each.id, ...unsignedBytes(each.end - each.start)]));
      out.push(bytes.subarray(each.start, each.end));
    }
  }
  writeGlobal();
  writeExport();
  if (!sawCode) throw new WasmFuelError('the module has no code');
  const total = out.reduce((sum, part) => sum + part.length, 0);
  const result = new Uint8Array(total);
  let at = 0;
  for (const part of out) {
    result.set(part, at);
    at += part.length;
  }
  return result;
}
