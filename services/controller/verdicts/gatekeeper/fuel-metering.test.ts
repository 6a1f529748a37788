import { FuelMeteringError, meterOffLoop } from './fuel-metering';
import { FUEL_EXPORT } from './wasm-fuel';

// Metering runs in a worker thread with its own limits: a module comes back metered, bytes that are
// not one are refused with the reason, and a thread that takes too long is ended.

const EMPTY_FUNCTION_MODULE = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00,
  0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b,
]);

describe('metering off the event loop', () => {
  jest.setTimeout(60_000);

  it('returns the module metered, with the fuel global exported', async () => {
    const metered = await meterOffLoop(EMPTY_FUNCTION_MODULE, 7);
    const webAssembly = (
      globalThis as unknown as {
        WebAssembly: {
          Module: { new (bytes: Uint8Array): object; exports(module: object): Array<{ name: string }> };
        };
      }
    ).WebAssembly;
    const names = webAssembly.Module.exports(new webAssembly.Module(metered)).map(({ name }) => name);
    expect(names).toEqual([FUEL_EXPORT]);
  });

  it('refuses bytes that are not a module, saying why', async () => {
    await expect(meterOffLoop(Uint8Array.from([1, 2, 3, 4]), 7)).rejects.toThrow(
      new FuelMeteringError('not a WebAssembly module (version 1)'),
    );
  });

  it('ends a thread that takes longer than its time', async () => {
    await expect(meterOffLoop(EMPTY_FUNCTION_MODULE, 7, 1)).rejects.toThrow(/took longer than/);
  });
});
