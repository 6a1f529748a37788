import { Socket } from 'node:net';
import type { Logger } from '../logging/logger';
import type { FlowObserverState } from './views/health';

// `--flowobserver-address host:port`: the flow observer is "connected" when a TCP connection to it
// succeeds; checked periodically so health reflects it without a request paying for the check.

export function probeTcp(address: string, timeoutMs: number): Promise<boolean> {
  const separator = address.lastIndexOf(':');
  const host = address.slice(0, separator);
  const port = Number(address.slice(separator + 1));
  return new Promise((resolve) => {
    const socket = new Socket();
    const finish = (reachable: boolean) => {
      socket.destroy();
      resolve(reachable);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('error', () => finish(false));
    socket.connect(port, host, () => finish(true));
  });
}

export class FlowObserverMonitor {
  private timer?: NodeJS.Timeout;

  constructor(
    readonly state: FlowObserverState,
    private readonly logger: Logger,
    private readonly intervalMs = 30_000,
    private readonly timeoutMs = 2_000,
  ) {}

  async start(): Promise<void> {
    if (!this.state.enabled) return;
    await this.check();
    this.timer = setInterval(() => void this.check(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async check(): Promise<void> {
    const connected = await probeTcp(this.state.address, this.timeoutMs);
    if (connected !== this.state.connected)
      this.logger[connected ? 'info' : 'warn'](
        { address: this.state.address },
        connected
          ? 'flow observer reachable'
          : 'flow observer unreachable; health is degraded until it answers',
      );
    this.state.connected = connected;
  }
}
