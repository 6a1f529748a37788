import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { answerClientErrorsAsJson } from './client-error';

// What a client sees when Node's own HTTP parser refuses its request: JSON, not an empty body.

async function rawExchange(server: Server, request: string): Promise<string> {
  const { port } = server.address() as AddressInfo;
  return await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  });
}

describe('answerClientErrorsAsJson', () => {
  let server: Server;

  beforeAll(async () => {
    server = createServer((_request, response) => response.end('{}'));
    answerClientErrorsAsJson(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function split(raw: string): { status: string; headers: string; body: string } {
    const [head, body] = raw.split('\r\n\r\n');
    const [status, ...headers] = head.split('\r\n');
    return { status, headers: headers.join('\n'), body };
  }

  it('answers a malformed request line with 400 JSON', async () => {
    const answer = split(await rawExchange(server, 'GARBAGE\r\n\r\n'));
    expect(answer.status).toBe('HTTP/1.1 400 Bad Request');
    expect(answer.headers).toMatch(/Content-Type: application\/json/);
    expect(JSON.parse(answer.body)).toEqual({ error: 'malformed HTTP request' });
  });

  it('answers headers over the limit with 431 JSON', async () => {
    const huge = `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
    const answer = split(await rawExchange(server, huge));
    expect(answer.status).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(JSON.parse(answer.body)).toEqual({ error: 'request headers too large' });
  });

  it('answers an invalid header character with 400 JSON', async () => {
    const answer = split(
      await rawExchange(server, 'GET / HTTP/1.1\r\nHost: x\r\nBad\u0001Header: y\r\n\r\n'),
    );
    expect(answer.status).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(answer.body)).toHaveProperty('error');
  });
});
