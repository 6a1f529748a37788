import { FUEL_EXPORT, meterWasmFuel, WasmFuelError } from './wasm-fuel';

// The metering itself, on modules written by hand: a loop that never ends stops once its fuel is
// spent (and the global says so), a function that ends spends what its instructions are charged,
// no index of the module moves, and instructions the metering does not know are refused.

interface WasmGlobal {
  value: number;
}
interface Instance {
  exports: Record<string, unknown>;
}
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object, imports?: object) => Instance;
    };
  }
).WebAssembly;

function module(body: number[], extraSections: number[] = []): Uint8Array {
  const code = [0x00, ...body, 0x0b]; // no locals
  return Uint8Array.from([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    // type: () -> i32
    0x01,
    0x05,
    0x01,
    0x60,
    0x00,
    0x01,
    0x7f,
    // function 0 of type 0
    0x03,
    0x02,
    0x01,
    0x00,
    // one global (i32 mutable = 7), an existing global the new one must not displace
    0x06,
    0x06,
    0x01,
    0x7f,
    0x01,
    0x41,
    0x07,
    0x0b,
    ...extraSections,
    // export "run" = function 0, "seven" = global 0
    0x07,
    0x0f,
    0x02,
    0x03,
    0x72,
    0x75,
    0x6e,
    0x00,
    0x00,
    0x05,
    0x73,
    0x65,
    0x76,
    0x65,
    0x6e,
    0x03,
    0x00,
    // code
    0x0a,
    code.length + 2,
    0x01,
    code.length,
    ...code,
  ]);
}

function instantiate(bytes: Uint8Array): { run: () => number; fuel: WasmGlobal; seven: WasmGlobal } {
  const instance = new wasm.Instance(new wasm.Module(meterWasmFuel(bytes, 1_000)));
  return {
    run: instance.exports.run as () => number,
    fuel: instance.exports[FUEL_EXPORT] as WasmGlobal,
    seven: instance.exports.seven as WasmGlobal,
  };
}

describe('wasm fuel metering', () => {
  it('stops a loop that never ends once its fuel is spent', () => {
    // loop; br 0; end; i32.const 1
    const { run, fuel } = instantiate(module([0x03, 0x40, 0x0c, 0x00, 0x0b, 0x41, 0x01]));
    fuel.value = 100_000;
    expect(() => run()).toThrow(/unreachable/);
    expect(fuel.value).toBeLessThan(0);
  });

  it('keeps the module as it was otherwise; a small leaf is charged where it is called', () => {
    // global.get 0; i32.const 35; i32.add: no loop, no call, three instructions: charged at its
    // call sites (none here: the host calls it), not at its entry.
    const { run, fuel, seven } = instantiate(module([0x23, 0x00, 0x41, 0x23, 0x6a]));
    fuel.value = 1_000;
    expect(run()).toBe(42);
    expect(seven.value).toBe(7);
    expect(fuel.value).toBe(1_000);
  });

  it('counts a loop that ends by its iterations', () => {
    // A counter from 0 to 1000 in the global: loop; global.get 0; i32.const 1; i32.add; global.set 0;
    // global.get 0; i32.const 1007; i32.lt_s; br_if 0; end; global.get 0
    const body = [
      0x03, 0x40, 0x23, 0x00, 0x41, 0x01, 0x6a, 0x24, 0x00, 0x23, 0x00, 0x41, 0xef, 0x07, 0x48, 0x0d, 0x00,
      0x0b, 0x23, 0x00,
    ];
    const { run, fuel, seven } = instantiate(module(body));
    fuel.value = 1_000_000;
    expect(run()).toBe(1007);
    const used = 1_000_000 - fuel.value;
    // 1000 iterations of 9 instructions (the end included), and the function's own few.
    expect(used).toBeGreaterThanOrEqual(9_000);
    expect(used).toBeLessThan(11_000);
    seven.value = 7;
    fuel.value = 5_000;
    expect(() => run()).toThrow(/unreachable/);
    expect(seven.value).toBeLessThan(600);
  });

  it('writes the fuel a loop kept in a local back when a branch leaves it', () => {
    // block; loop; counter += 1; br_if 1 (out of the block) when counter >= 1007; br 0; end; end;
    // global.get 0
    const body = [
      0x02, 0x40, 0x03, 0x40, 0x23, 0x00, 0x41, 0x01, 0x6a, 0x24, 0x00, 0x23, 0x00, 0x41, 0xef, 0x07, 0x4e,
      0x0d, 0x01, 0x0c, 0x00, 0x0b, 0x0b, 0x23, 0x00,
    ];
    const { run, fuel } = instantiate(module(body));
    fuel.value = 1_000_000;
    expect(run()).toBe(1007);
    const used = 1_000_000 - fuel.value;
    expect(used).toBeGreaterThanOrEqual(10_000);
    expect(used).toBeLessThan(13_000);
  });

  it('refuses what it cannot meter', () => {
    expect(() => meterWasmFuel(Uint8Array.from([1, 2, 3]), 0)).toThrow(WasmFuelError);
    // A SIMD instruction (0xfd prefix) is not one it knows.
    expect(() => meterWasmFuel(module([0xfd, 0x0c]), 0)).toThrow(/not one this host meters/);
  });
});
