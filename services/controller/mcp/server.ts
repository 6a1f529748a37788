import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { packageVersion } from '../../model/package-version';
import { registerResources } from './resources';
import { registerTools, type ToolDependencies } from './tools';
import { registerRiskTools, type RiskToolDependencies } from './risk-tools';

// One MCP server (resources + tools) per client session: the SDK binds a server to one transport.
// They are cheap (a few closures over the shared index), so every session gets its own.

export type ForewarnMcpDependencies = ToolDependencies & RiskToolDependencies;

const INSTRUCTIONS = `Forewarn explains which policies constrain a Kubernetes namespace and how to fix them.
Start with the report of a namespace (resource forewarn://reports/{namespace}); read one constraint with
forewarn://constraints/{namespace}/{name}. Tools: "query" narrows a namespace's constraints to a workload
(pod labels), a type or a severity; "explain" maps an error message (timeouts, exceeded quota, admission
denials) to the constraints that likely caused it; "check" returns the admission warnings a manifest would
get without applying it; "risks" lists the running workloads of a namespace that would be rejected on their
next rollout (also resource forewarn://risks/{namespace}); "impact" says which workloads a proposed policy
would reject before it is applied. Everything is read-only. Names shown as "redacted" are hidden by the controller's
detail level.`;

export function createForewarnMcpServer(dependencies: ForewarnMcpDependencies): McpServer {
  const server = new McpServer(
    { name: 'forewarn', title: 'Forewarn', version: packageVersion() },
    { instructions: INSTRUCTIONS },
  );
  registerResources(server, dependencies);
  registerTools(server, dependencies);
  registerRiskTools(server, dependencies);
  return server;
}
