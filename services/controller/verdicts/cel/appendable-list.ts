/** Forewarn's own ceiling on one list a CEL expression builds (cel-go builds concatenations lazily). */
const MAXIMUM_LIST_ELEMENTS = 5_000_000;

// An accumulator list the `map` and `filter` macros append to one element at a time: appending to
// the newest view extends the shared array in place (amortised O(1), like cel-go's mutable
// accumulator); appending to an older view copies. @bufbuild/cel's own concatenation nests one view
// per step, which made iterating a macro's result quadratic.
const LIST_MARK = Symbol.for('@bufbuild/cel/list');

export class AppendableList {
  readonly [LIST_MARK] = {};
  constructor(
    private readonly store: unknown[],
    readonly size: number,
  ) {}

  static concat(
    left: Iterable<unknown> & { size: number },
    right: Iterable<unknown> & { size: number },
    tooLarge: (maximum: number) => never,
  ): AppendableList {
    const size = left.size + right.size;
    // Checked before the list is built: the memory is never taken.
    if (size > MAXIMUM_LIST_ELEMENTS) tooLarge(MAXIMUM_LIST_ELEMENTS);
    let store: unknown[];
    if (left instanceof AppendableList && left.store.length === left.size) store = left.store;
    else store = [...left];
    for (const item of right) store.push(item);
    return new AppendableList(store, size);
  }

  get(index: number): unknown {
    return index >= 0 && index < this.size ? this.store[index] : undefined;
  }

  *values(): IterableIterator<unknown> {
    for (let index = 0; index < this.size; index++) yield this.store[index];
  }

  [Symbol.iterator](): IterableIterator<unknown> {
    return this.values();
  }
}
