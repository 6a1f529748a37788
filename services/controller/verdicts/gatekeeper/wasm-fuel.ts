import {
  importCounts,
  parameterCounts,
  Reader,
  section,
  sectionsOf,
  SECTION_CODE,
  SECTION_EXPORT,
  SECTION_GLOBAL,
  SECTIONS_AFTER_GLOBAL,
  signedBytes,
  skipBlockType,
  skipImmediates,
  skipPrefixedImmediates,
  unsignedBytes,
  WasmFuelError,
  type Section,
} from './wasm-binary';
import {
  BodyBuilder,
  cacheLoops,
  foldSegments,
  leafCosts,
  LEAF_UNITS,
  type Body,
} from './wasm-fuel-segments';
import {
  cachedCharge,
  dynamicCharge,
  DYNAMIC_COUNT_CAP,
  GLOBAL_GET,
  GLOBAL_SET,
  I32_CONST,
  LOCAL_GET,
  LOCAL_SET,
  staticCharge,
} from './wasm-fuel-charges';

export { WasmFuelError } from './wasm-binary';

// Fuel for a compiled template (issue 32, docs/decisions.md "Rego on the event loop, bounded by
// fuel"): a Wasm call cannot be interrupted on the event loop, so the module itself counts its
// work and stops. This adds one mutable i32 global, exported as FUEL_EXPORT, and charges it:
// - at the start of each straight run of code (a segment: a function's entry, a loop header, an
//   if's arms, the code after a block's end), the instructions up to the next such start; a
//   small segment is charged with the one it depends on instead, while that charge stays small;
// - before every memory.copy / memory.fill, one unit per byte they touch (opa's modules have none:
//   its memcpy is a loop; this is for a module that has);
// - before every memory.grow, MEMORY_GROW_UNITS_PER_PAGE per page.
// Control enters a segment only at its start (a forward branch lands after an `end`, a backward
// one on a loop header), so each instruction runs at most once per charge of its segment, and a
// small segment folded into the one it depends on at most once per charge of that one: the fuel
// spent is an upper bound of the instructions run. When the global goes below zero
// the module executes `unreachable` (a RuntimeError the caller tells from others by the global).
// Appending a defined global and an export shifts no index: no call or global reference changes,
// and the SDK's own import object still fits the module.
// Hand-written rather than through binaryen (the decision says why): the module is read once,
// instruction by instruction, and copied with the charges inserted; only the sections that change
// (global, export, code) are re-encoded. Instructions it does not know (SIMD, exceptions, GC) make
// it refuse the module (WasmFuelError), never guess.

/** The exported global the host sets before an evaluation and reads after. */

export const FUEL_EXPORT = 'forewarn_fuel';
/**
 * memory.grow: units per 64 KiB page asked for. A page costs the kernel's first-touch faults when
 * it is written (16 of 4 KiB, microseconds): charged at that cost in fuel, so what memory one
 * evaluation can reach is bounded by its fuel too (a template's budget reaches about 12 MiB).
 */
export const MEMORY_GROW_UNITS_PER_PAGE = 1 << 18;
/** The loops a branch to label `depth` leaves (the target loop itself is continued, not left). */
function loopsLeft(frames: Frame[], depth: number): number[] {
  const left: number[] = [];
  for (let index = Math.max(0, frames.length - 1 - depth) + 1; index < frames.length; index++) {
    const loop = frames[index].loop;
    if (loop !== undefined) left.push(loop);
  }
  return left;
}

/** Reads a branch's labels and marks the loops it leaves; returns its weight. */
function readBranch(
  reader: Reader,
  opcode: number,
  frames: Frame[],
  body: BodyBuilder,
  start: number,
): number {
  if (opcode === 0x0f) {
    body.mark(start, { writeBack: [...body.open] });
    return 1;
  }
  if (opcode !== 0x0e) {
    body.mark(start, { writeBack: loopsLeft(frames, reader.unsigned()) });
    return 1;
  }
  const targets = reader.unsigned();
  let deepest = 0;
  for (let index = 0; index <= targets; index++) deepest = Math.max(deepest, reader.unsigned());
  body.mark(start, { writeBack: loopsLeft(frames, deepest) });
  return 1 + Math.ceil(targets / 8);
}

/** An open block: the segment it was opened in, and its loop id when it is a loop. */
interface Frame {
  opener: number;
  loop?: number;
}

/** Reads one function's instructions (reader at the first instruction) up to its final `end`. */
function readInstructions(reader: Reader, end: number): Body {
  const body = new BodyBuilder(reader.bytes, reader.at);
  const frames: Frame[] = [{ opener: 0 }];
  const begin = (always: boolean, parent?: number) => body.begin(reader.at, always, parent);
  while (frames.length > 0) {
    if (reader.at >= end) throw new WasmFuelError('a function body ends inside a block');
    const start = reader.at;
    const opcode = reader.byte();
    let units = 1;
    let next: (() => void) | undefined;
    switch (opcode) {
      case 0x02: // block: its first instructions run whenever it is entered
        skipBlockType(reader);
        frames.push({ opener: body.current });
        break;
      case 0x04: {
        // if: the then arm is entered from here
        skipBlockType(reader);
        const opener = body.current;
        frames.push({ opener });
        next = () => begin(false, opener);
        break;
      }
      case 0x05: {
        // else: the else arm is entered from where the if was
        const { opener } = frames[frames.length - 1];
        next = () => begin(false, opener);
        break;
      }
      case 0x03: {
        // loop: charged at each iteration
        const loop = body.openLoop(start);
        skipBlockType(reader);
        body.loopsOrCalls = true;
        frames.push({ opener: body.current, loop });
        next = () => begin(true);
        break;
      }
      case 0x0b: {
        // end: what follows is entered by the block's branches and by falling through
        const { opener, loop } = frames.pop() ?? { opener: 0 };
        if (loop !== undefined) {
          body.open.pop();
          body.mark(reader.at, { writeBack: [loop] });
        }
        if (frames.length > 0) next = () => begin(false, opener);
        break;
      }
      case 0x0c: // br, br_if, br_table, return: leaving loops writes their cache back first
      case 0x0d:
      case 0x0e:
      case 0x0f:
        units = readBranch(reader, opcode, frames, body, start);
        break;
      case 0x10: // call, return_call: a small leaf callee is charged here (leafCosts)
      case 0x12:
        body.call(reader.unsigned());
        break;
      case 0x11: // call_indirect, return_call_indirect
      case 0x13:
        skipImmediates(reader, opcode);
        body.call('indirect');
        break;
      case 0x40: // memory.grow
        body.dynamic('pages', start);
        reader.unsigned();
        break;
      case 0xfc: {
        const sub = reader.unsigned();
        if (sub === 10 || sub === 11) body.dynamic('bytes', start); // memory.copy, memory.fill
        skipPrefixedImmediates(reader, sub);
        break;
      }
      default:
        units = skipImmediates(reader, opcode);
    }
    body.segments[body.current].units += units;
    next?.();
  }
  if (reader.at !== end) throw new WasmFuelError('a function body has bytes after its end');
  return body.finish(reader.at);
}

interface ReadBody {
  header: Uint8Array[];
  /** Index of the scratch local (after every parameter and local). */
  scratch: number;
  body: Body;
}

function readBody(bytes: Uint8Array, reader: Reader, parameters: number): ReadBody {
  const size = reader.unsigned();
  const end = reader.at + size;
  const groups = reader.unsigned();
  const groupsStart = reader.at;
  let scratch = parameters;
  for (let group = 0; group < groups; group++) {
    scratch += reader.unsigned();
    reader.skip(1);
  }
  const localsEnd = reader.at;
  const body = readInstructions(reader, end);
  // Every function gets one more i32 local for its charges (the last: no index moves).
  const header = [
    Uint8Array.from(unsignedBytes(groups + 1)),
    bytes.subarray(groupsStart, localsEnd),
    Uint8Array.from([1, 0x7f]),
  ];
  return { header, scratch, body };
}

function emitBody(fuel: number, { header, scratch, body }: ReadBody): Uint8Array[] {
  const parts: Uint8Array[] = [...header];
  const cached = (loops: number[]) => loops.some((loop) => body.loops[loop].cached);
  const writeBack = Uint8Array.from([
    LOCAL_GET,
    ...unsignedBytes(scratch),
    GLOBAL_SET,
    ...unsignedBytes(fuel),
  ]);
  for (const piece of body.pieces) {
    if (piece instanceof Uint8Array) parts.push(piece);
    else if ('segment' in piece) {
      const segment = body.segments[piece.segment];
      const units = segment.units + segment.folded;
      if (segment.charged && units > 0)
        parts.push(
          Uint8Array.from(
            cached(segment.loops) ? cachedCharge(fuel, scratch, units) : staticCharge(fuel, scratch, units),
          ),
        );
    } else if ('loopEntry' in piece) {
      if (body.loops[piece.loopEntry].cached)
        parts.push(
          Uint8Array.from([GLOBAL_GET, ...unsignedBytes(fuel), LOCAL_SET, ...unsignedBytes(scratch)]),
        );
    } else if ('writeBack' in piece) {
      if (cached(piece.writeBack)) parts.push(writeBack);
    } else if (piece.dynamic === 'pages')
      parts.push(Uint8Array.from(dynamicCharge(fuel, scratch, 18, DYNAMIC_COUNT_CAP)));
    // A byte a unit, counted up to 2^30.
    else parts.push(Uint8Array.from(dynamicCharge(fuel, scratch, 0, 1 << 30)));
  }
  const size = parts.reduce((total, part) => total + part.length, 0);
  return [Uint8Array.from(unsignedBytes(size)), ...parts];
}

/** The code section with every body metered; `fuel`: the fuel global's index. */
function meteredCode(
  bytes: Uint8Array,
  code: Section,
  fuel: number,
  parameters: number[],
  importedFunctions: number,
): Uint8Array[] {
  const reader = new Reader(bytes, code.start);
  const count = reader.unsigned();
  const bodies: ReadBody[] = [];
  for (let index = 0; index < count; index++) bodies.push(readBody(bytes, reader, parameters[index] ?? 0));
  if (reader.at !== code.end) throw new WasmFuelError('the code section has bytes after its bodies');
  const leaves = leafCosts(bodies);
  for (const [index, { body }] of bodies.entries()) {
    if (leaves[index] !== undefined) {
      for (const segment of body.segments) segment.charged = false;
      continue;
    }
    for (const segment of body.segments) {
      segment.units += segment.indirectCalls * LEAF_UNITS;
      for (const callee of segment.callees) segment.units += leaves[callee - importedFunctions] ?? 0;
    }
    foldSegments(body.segments);
    cacheLoops(body.loops, (callee) => leaves[callee - importedFunctions] !== undefined);
  }
  const out: Uint8Array[] = [Uint8Array.from(unsignedBytes(count))];
  for (const body of bodies) out.push(...emitBody(fuel, body));
  return section(SECTION_CODE, out);
}

/** The section's entries as they are, with `extra` appended and the count raised. */
function appended(
  bytes: Uint8Array,
  existing: Section | undefined,
  id: number,
  extra: number[],
): Uint8Array[] {
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
  const imports = importCounts(bytes, sections);
  const fuel = imports.globals + definedGlobals;
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
      out.push(...meteredCode(bytes, each, fuel, parameters, imports.functions));
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
