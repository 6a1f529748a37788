import { createServer, type Server } from 'node:net';
import { FlowObserverMonitor } from './flow-observer';
import { silentLogger } from '../logging/logger';

describe('flow observer reachability', () => {
  let server: Server;
  let port: number;

  beforeEach(async () => {
    server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is connected while the address accepts connections and not after it stops', async () => {
    const state = { enabled: true, connected: false, address: `127.0.0.1:${port}` };
    const monitor = new FlowObserverMonitor(state, silentLogger(), 60_000, 500);
    await monitor.start();
    expect(state.connected).toBe(true);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await monitor.check();
    expect(state.connected).toBe(false);
    monitor.stop();
  });

  it('does nothing when no address is configured', async () => {
    const state = { enabled: false, connected: false, address: '' };
    await new FlowObserverMonitor(state, silentLogger()).start();
    expect(state.connected).toBe(false);
  });
});
