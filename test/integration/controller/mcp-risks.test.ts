import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunningController } from '../../../services/controller/runtime';
import type { ImpactReport } from '../../../services/controller/risks/impact';
import type { RisksReport } from '../../../services/controller/risks/risk-view';
import {
  connectClient,
  httpText,
  readResourceText,
  startDemoController,
  toolJson,
  toolText,
} from './mcp-support';

// Workloads at risk and impact (issue 35) through a real controller on the demo cluster: the MCP
// resource and tool answer what the HTTP route answers, and `impact` only at the full level.

const POLICY = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-team-label
spec:
  validationFailureAction: Enforce
  rules:
    - name: team
      match:
        any:
          - resources:
              kinds: [Deployment]
      validate:
        message: a team label is required
        pattern:
          metadata:
            labels:
              team: "?*"
`;

describe.each(['summary', 'full'])('workloads at risk through MCP at %s', (level) => {
  let controller: RunningController;
  let client: Client;

  beforeAll(async () => {
    controller = await startDemoController(level);
    await controller.risks.idle();
    client = await connectClient(controller, 'streamable-http');
  });

  afterAll(async () => {
    await client?.close();
    await controller?.close();
  });

  const call = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  it('the risks resource and tool are the HTTP body', async () => {
    const http = await httpText(controller, '/resources/risks/shop');
    expect(await readResourceText(client, 'forewarn://risks/shop')).toBe(http);
    const fromTool = toolJson<RisksReport>(await call('risks', { namespace: 'shop' }));
    expect(fromTool).toEqual(JSON.parse(http));
    expect(fromTool).toMatchObject({ namespace: 'shop', detailLevel: level, evaluated: true });
    const report = JSON.parse(await httpText(controller, '/resources/reports/shop')) as {
      atRiskCount: number;
    };
    expect(report.atRiskCount).toBe(fromTool.atRiskCount);
  });

  // With --manifests the API is not authenticated (--api-auth=none): every caller is answered as
  // POST /api/v1/impact answers it, at full; the refusal below full is in http/risk-routes.test.ts.
  it('impact names what a proposed policy would reject, and changes nothing', async () => {
    const before = controller.index.revision;
    const result = await call('impact', { policies: POLICY });
    const report = toolJson<ImpactReport>(result);
    expect(report.proposed).toEqual([expect.objectContaining({ kind: 'ClusterPolicy', replaces: false })]);
    expect(report.newlyRejectedCount).toBeGreaterThan(0);
    expect(controller.index.revision).toBe(before);
    const invalid = await call('impact', { policies: 'kind: [' });
    expect(invalid.isError).toBe(true);
    expect(toolText(invalid)).toMatch(/line 1/);
  });
});
