import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../../services/logging/logger';
import { createControllerClient } from '../../../services/webhook/controller-client';
import { tokenFileReader } from '../../../services/webhook/token-file';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import {
  demoClusterObjects,
  indexObjects,
  tokenReviewControllerApp,
} from '../../support/controller-fixtures';

// The webhook shows the controller its projected ServiceAccount token (read from the file the
// kubelet writes) and gets the unredacted list; without the file it still gets an answer, redacted.

const demo = indexObjects(demoClusterObjects());
const apiServer = new KubernetesApiTestServer();
let controller: Server;
let baseUrl: string;
let directory: string;

beforeAll(async () => {
  await apiServer.start();
  directory = mkdtempSync(path.join(tmpdir(), 'forewarn-token-'));
  const app = tokenReviewControllerApp(demo, apiServer, 'forewarn-system/forewarn-webhook');
  controller = await new Promise<Server>((resolve) => {
    const server = createServer(app).listen(0, '127.0.0.1', () => resolve(server));
  });
  const address = controller.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => controller.close(() => resolve()));
  await apiServer.stop();
  rmSync(directory, { recursive: true, force: true });
});

async function namesSeenWith(bearerToken?: () => string | undefined): Promise<string[]> {
  const client = createControllerClient({ baseUrl, bearerToken });
  try {
    const result = await client.query({ namespace: 'shop', resource: null, labels: null });
    if (!result.ok) throw new Error(result.detail);
    return result.constraints.map((constraint) => constraint.name);
  } finally {
    await client.close();
  }
}

it("gets the unredacted list with the webhook's token file, a redacted one without", async () => {
  const tokenFile = path.join(directory, 'token');
  writeFileSync(
    tokenFile,
    apiServer.tokens.issue({
      namespace: 'forewarn-system',
      serviceAccount: 'forewarn-webhook',
      audiences: ['forewarn-controller'],
    }) + '\n',
  );
  const withToken = await namesSeenWith(tokenFileReader(tokenFile, silentLogger()));
  const withoutToken = await namesSeenWith();
  expect(withToken).toContain('block-cloud-metadata');
  expect(withoutToken).not.toContain('block-cloud-metadata');
  expect(withoutToken).toContain('redacted');
  expect(withoutToken).toHaveLength(withToken.length);
});

it('still gets an answer (redacted) when the token file cannot be read', async () => {
  const names = await namesSeenWith(tokenFileReader(path.join(directory, 'missing'), silentLogger()));
  expect(names).toContain('redacted');
});
