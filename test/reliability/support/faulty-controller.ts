import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// A controller that misbehaves on demand, for the webhook fault matrix. It serves the
// `GET /api/v1/constraints` contract (two warnings) when healthy, and in every other mode fails the
// way real controllers and networks fail. The mode can change while requests are in flight; every
// socket is tracked so a stop cuts hung answers instead of leaving them to the test's end.

export type ControllerFault =
  | 'healthy'
  /** Nothing listens: connection refused. */
  | 'down'
  /** Accepts the connection and resets it at once. */
  | 'refusing'
  | 'hanging'
  | 'answer-after-2900ms'
  | 'answer-after-3100ms'
  | 'status-500'
  /** Declares a full body, sends half of it, closes the connection. */
  | 'truncated-json'
  | 'garbage-json'
  /** 50 MB of valid-looking JSON, written as fast as the client reads. */
  | 'fifty-megabytes';

export const HEALTHY_ANSWER = JSON.stringify({
  constraints: [
    {
      name: 'default-deny-ingress',
      namespace: 'shop',
      constraintType: 'NetworkIngress',
      severity: 'Warning',
      effect: 'deny',
      summary: 'NetworkPolicy "default-deny-ingress" denies all ingress traffic',
      remediationHint: 'add a NetworkPolicy that allows the traffic your pods need',
      sourceKind: 'NetworkPolicy',
      sourceApiVersion: 'networking.k8s.io/v1',
      sourceName: 'default-deny-ingress',
      sourceNamespace: 'shop',
      tags: [],
    },
    {
      name: 'compute',
      namespace: 'shop',
      constraintType: 'ResourceLimit',
      severity: 'Critical',
      effect: 'limit',
      summary: 'ResourceQuota "compute": memory at 94%',
      remediationHint: 'lower your requests or ask for a bigger quota',
      sourceKind: 'ResourceQuota',
      sourceApiVersion: 'v1',
      sourceName: 'compute',
      sourceNamespace: 'shop',
      tags: [],
    },
  ],
});

const FIFTY_MEGABYTES = 50 * 1024 * 1024;
const FILLER = `{"severity":"Warning","summary":"${'x'.repeat(1000)}","remediationHint":"h"},`;

export class FaultyController {
  fault: ControllerFault = 'healthy';
  /** Requests answered per fault, to show each mode was really exercised. */
  readonly served = new Map<ControllerFault, number>();
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private boundPort = 0;

  get url(): string {
    return `http://127.0.0.1:${this.boundPort}`;
  }

  /** Listens on the port of the previous start, if any, so the webhook's URL stays valid. */
  async start(): Promise<void> {
    const server = createServer((request, response) => this.answer(request, response));
    server.on('connection', (socket: Socket) => {
      if (this.fault === 'refusing') {
        socket.resetAndDestroy();
        this.count('refusing');
        return;
      }
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.boundPort, '127.0.0.1', () => resolve());
    });
    this.boundPort = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Switches the fault; `down` stops listening, any other fault listens (again) on the same port. */
  async setFault(fault: ControllerFault): Promise<void> {
    this.fault = fault;
    if (fault === 'down') await this.stop();
    else if (!this.server) await this.start();
  }

  private count(fault: ControllerFault): void {
    this.served.set(fault, (this.served.get(fault) ?? 0) + 1);
  }

  private later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, ms);
    this.timers.add(timer);
  }

  private answer(request: IncomingMessage, response: ServerResponse): void {
    const fault = this.fault;
    this.count(fault);
    request.resume();
    const json = (body: string) => {
      if (response.destroyed) return;
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
    };
    switch (fault) {
      case 'healthy':
        return json(HEALTHY_ANSWER);
      case 'hanging':
        return; // never answered; stop() cuts the socket
      case 'answer-after-2900ms':
        return this.later(2_900, () => json(HEALTHY_ANSWER));
      case 'answer-after-3100ms':
        return this.later(3_100, () => json(HEALTHY_ANSWER));
      case 'status-500':
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end('{"error":"internal error; see the controller log"}');
        return;
      case 'truncated-json':
        response.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(HEALTHY_ANSWER),
        });
        response.write(HEALTHY_ANSWER.slice(0, HEALTHY_ANSWER.length / 2));
        this.later(5, () => response.socket?.destroy());
        return;
      case 'garbage-json':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x22, 0x63, 0x6f, 0x6e, 0x5d, 0x5d, 0x0a]));
        return;
      case 'fifty-megabytes':
        return this.streamFiftyMegabytes(response);
      case 'down':
      case 'refusing':
        // Connections are refused before a request exists; a request that raced the switch is cut.
        response.socket?.destroy();
        return;
    }
  }

  private streamFiftyMegabytes(response: ServerResponse): void {
    response.writeHead(200, { 'content-type': 'application/json' });
    let written = 0;
    response.write('{"constraints":[');
    const pump = (): void => {
      while (written < FIFTY_MEGABYTES) {
        if (response.destroyed) return;
        written += FILLER.length;
        if (!response.write(FILLER)) {
          response.once('drain', pump);
          return;
        }
      }
      response.end('{"severity":"Info","summary":"end","remediationHint":""}]}');
    };
    response.on('close', () => response.removeAllListeners('drain'));
    pump();
  }
}
