// The segments fuel metering (wasm-fuel.ts) charges: where a function's code is charged, what
// each charge counts, and which small functions are charged at their call sites instead.

/**
 * A straight run of code between two places control can enter it: a function's entry, a loop
 * header, an if's arms, the code after a block's end. Within a segment control only goes forward,
 * and leaves it only through a branch or the end of a block (br_if may leave early: what it skips
 * is charged all the same, an over-charge).
 */
export interface Segment {
  units: number;
  /** Where it must be charged itself: a function's entry and a loop header, always. */
  always: boolean;
  /**
   * The segment that opened the block or if this one follows or is an arm of: this one runs at
   * most once each time that one does, so its units may be charged there instead.
   */
  parent?: number;
  /** Units of smaller segments charged with this one. */
  folded: number;
  /** Functions it calls (by index), and how many indirect calls it makes. */
  callees: number[];
  indirectCalls: number;
  /** The loops it is in (their ids in Body.loops). */
  loops: number[];
  charged: boolean;
}

/**
 * A segment of at most FOLD_UNITS is charged with the segment it depends on (no charge of its own:
 * ten instructions saved) while that one's charge stays within FOLDED_UNITS_MAX: over-charging a
 * segment that runs by what it skips stays small, and small arms cost no check of their own.
 */
const FOLD_UNITS = 12;
const FOLDED_UNITS_MAX = 40;

/** A function body's pieces: original bytes, and charges whose units are known once it is read. */
export type Piece =
  | Uint8Array
  | { segment: number }
  | { dynamic: 'bytes' | 'pages' }
  /** Before a loop: its fuel cache is filled from the global (when the loop caches it). */
  | { loopEntry: number }
  /** Where control leaves these loops: the cache is written back (when one of them caches it). */
  | { writeBack: number[] };

/**
 * A loop may keep the fuel in the function's scratch local (a register) instead of the global,
 * while control is inside it, when nothing inside reads or writes the global: no call but to
 * leaves (which never charge), no indirect call, no memory.grow / copy / fill. The global is
 * written back wherever control leaves the loop (its end, a branch out, a return) and before a
 * trap. Only the outermost such loop caches; the loops inside it use its cache.
 */
export interface Loop {
  callees: number[];
  touchesFuel: boolean;
  /** The loops it is in. */
  outer: number[];
  cached: boolean;
}

export interface Body {
  pieces: Piece[];
  segments: Segment[];
  usesScratch: boolean;
  /** Loops or calls: its cost is not bounded by its size. */
  loopsOrCalls: boolean;
  loops: Loop[];
}

/** Decides which segments are charged themselves and what each charge counts. */
export function foldSegments(segments: Segment[]): void {
  const root = (index: number): number => {
    let at = index;
    while (!segments[at].charged) at = segments[at].parent ?? 0;
    return at;
  };
  for (const segment of segments) {
    segment.charged = true;
    if (segment.always || segment.parent === undefined || segment.units > FOLD_UNITS) continue;
    const target = segments[root(segment.parent)];
    if (target.units + target.folded + segment.units > FOLDED_UNITS_MAX) continue;
    target.folded += segment.units;
    segment.charged = false;
  }
}

/** A segment that opens no fold of its own yet. */
export function newSegment(always: boolean, loops: number[], parent?: number): Segment {
  return { units: 0, always, parent, folded: 0, charged: true, callees: [], indirectCalls: 0, loops };
}

/** Decides which loops cache the fuel (Loop); `leaf(callee)`: whether a call never charges. */
export function cacheLoops(loops: Loop[], leaf: (callee: number) => boolean): void {
  for (const loop of loops)
    loop.cached =
      !loop.touchesFuel && loop.callees.every(leaf) && !loop.outer.some((outer) => loops[outer].cached);
}

/**
 * A function without loops, calls or dynamic charges, of at most LEAF_UNITS instructions, runs at
 * most that many each time it is called: it is charged at its call sites (and at most LEAF_UNITS at
 * each indirect call) instead of at its own entry. The runtime's many small helpers then cost no
 * check of their own. Called from the host (an export), it runs a bounded few instructions.
 */
export const LEAF_UNITS = 48;

/** Each defined function's cost when it is a small leaf (charged at its call sites), else undefined. */
export function leafCosts(bodies: ReadonlyArray<{ body: Body }>): Array<number | undefined> {
  return bodies.map(({ body }) => {
    if (body.loopsOrCalls || body.usesScratch) return undefined;
    const units = body.segments.reduce((total, segment) => total + segment.units, 0);
    return units <= LEAF_UNITS ? units : undefined;
  });
}

/** A function body being read: its pieces (bytes copied as they are, and charges) and segments. */
export class BodyBuilder implements Body {
  readonly segments: Segment[] = [newSegment(true, [])];
  readonly loops: Loop[] = [];
  /** The loops control is in now. */
  open: number[] = [];
  readonly pieces: Piece[] = [{ segment: 0 }];
  usesScratch = false;
  loopsOrCalls = false;
  /** The segment being read. */
  current = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private copiedFrom: number,
  ) {}

  /** The bytes read since the last piece, as they are. */
  private cut(until: number): void {
    if (until > this.copiedFrom) this.pieces.push(this.bytes.subarray(this.copiedFrom, until));
    this.copiedFrom = until;
  }

  /** A new segment starts at `at`. */
  begin(at: number, always: boolean, parent?: number): void {
    this.cut(at);
    this.current = this.segments.length;
    this.segments.push(newSegment(always, [...this.open], parent));
    this.pieces.push({ segment: this.current });
  }

  /** A piece at `at`, between the bytes before and after. */
  mark(at: number, piece: Piece): void {
    this.cut(at);
    this.pieces.push(piece);
  }

  /** A loop opens at `at` (its opcode); returns its id. */
  openLoop(at: number): number {
    const id = this.loops.length;
    this.loops.push({ callees: [], touchesFuel: false, outer: [...this.open], cached: false });
    this.mark(at, { loopEntry: id });
    this.open.push(id);
    return id;
  }

  /** A call in the current segment (a leaf callee is charged there, and leaves loops' cache possible). */
  call(callee: number | 'indirect'): void {
    const segment = this.segments[this.current];
    if (callee === 'indirect') segment.indirectCalls++;
    else segment.callees.push(callee);
    this.loopsOrCalls = true;
    for (const id of this.open)
      if (callee === 'indirect') this.loops[id].touchesFuel = true;
      else this.loops[id].callees.push(callee);
  }

  /** memory.grow / copy / fill at `at`: the count on top of the stack is charged there. */
  dynamic(kind: 'bytes' | 'pages', at: number): void {
    this.mark(at, { dynamic: kind });
    this.usesScratch = true;
    for (const id of this.open) this.loops[id].touchesFuel = true;
  }

  finish(end: number): Body {
    this.cut(end);
    return this;
  }
}
