import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isRecord } from '../../services/model/kubernetes';

// The table the CEL cost oracle and Forewarn both evaluate: the validations (and variables) of the
// ValidatingAdmissionPolicies in the Kubernetes documentation and of the Kyverno CEL policies in the
// real-world corpus (read from ../shared/realworld, never copied), plus hand-written expressions for
// each cost rule, each against small and large objects.

export interface CostCase {
  name: string;
  validations: string[];
  variables: Array<{ name: string; expression: string }>;
  object: Record<string, unknown>;
  oldObject?: Record<string, unknown>;
}

const REALWORLD = '/work/shared/realworld/policies';

function yamlFiles(directory: string): string[] {
  let files: string[] = [];
  try {
    for (const entry of readdirSync(directory)) {
      const path = join(directory, entry);
      if (statSync(path).isDirectory()) files = files.concat(yamlFiles(path));
      else if (/\.ya?ml$/.test(entry)) files.push(path);
    }
  } catch {
    return files;
  }
  return files;
}

function documentsOf(file: string): Record<string, unknown>[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((document) => document.toJSON() as unknown)
    .filter(isRecord);
}

export interface PolicyExpressions {
  name: string;
  validations: string[];
  variables: Array<{ name: string; expression: string }>;
}

/** ValidatingAdmissionPolicies without params, and Kyverno rules with CEL expressions. */
export function corpusPolicies(): PolicyExpressions[] {
  const policies: PolicyExpressions[] = [];
  for (const file of yamlFiles(REALWORLD)) {
    for (const document of documentsOf(file)) {
      const spec = isRecord(document.spec) ? document.spec : {};
      const name = `${file.slice(REALWORLD.length + 1)}#${isRecord(document.metadata) ? String(document.metadata.name) : ''}`;
      if (document.kind === 'ValidatingAdmissionPolicy' && spec.paramKind === undefined) {
        const validations = (Array.isArray(spec.validations) ? spec.validations : [])
          .filter(isRecord)
          .map((entry) => String(entry.expression));
        const variables = (Array.isArray(spec.variables) ? spec.variables : [])
          .filter(isRecord)
          .map((entry) => ({ name: String(entry.name), expression: String(entry.expression) }));
        if (validations.length > 0) policies.push({ name, validations, variables });
      }
      if (typeof document.apiVersion === 'string' && document.apiVersion.startsWith('kyverno.io/')) {
        for (const rule of (Array.isArray(spec.rules) ? spec.rules : []).filter(isRecord)) {
          const validate = isRecord(rule.validate) ? rule.validate : {};
          const cel = isRecord(validate.cel) ? validate.cel : {};
          const validations = (Array.isArray(cel.expressions) ? cel.expressions : [])
            .filter(isRecord)
            .map((entry) => String(entry.expression));
          const variables = (Array.isArray(cel.variables) ? cel.variables : [])
            .filter(isRecord)
            .map((entry) => ({ name: String(entry.name), expression: String(entry.expression) }));
          if (validations.length > 0)
            policies.push({ name: `${name}/${String(rule.name)}`, validations, variables });
        }
      }
    }
  }
  return policies;
}

function container(index: number, large: boolean): Record<string, unknown> {
  return {
    name: `app-${index}`,
    image: index % 3 === 0 ? `registry.example.com/team/app-${index}:1.${index}` : `nginx:latest`,
    ports: [{ containerPort: 8080 + index, protocol: 'TCP' }],
    resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
    securityContext: large
      ? { privileged: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } }
      : { privileged: index % 2 === 0 },
    ...(large
      ? {
          env: Array.from({ length: 10 }, (_, item) => ({
            name: `VAR_${item}`,
            value: 'x'.repeat(item * 10),
          })),
        }
      : {}),
  };
}

function podSpec(count: number, large: boolean): Record<string, unknown> {
  return {
    containers: Array.from({ length: count }, (_, index) => container(index, large)),
    volumes: [{ name: 'data', hostPath: { path: '/var/run/docker.sock' } }],
  };
}

export function objects(): Array<{ name: string; object: Record<string, unknown> }> {
  const metadata = (name: string) => ({
    name,
    namespace: 'team',
    labels: { app: name, 'app.kubernetes.io/name': name, environment: 'prod' },
    annotations: { 'example.com/owner': 'team-a' },
  });
  return [
    {
      name: 'small pod',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: metadata('web'), spec: podSpec(1, false) },
    },
    {
      name: 'large pod',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: metadata('big'), spec: podSpec(60, true) },
    },
    {
      name: 'small deployment',
      object: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: metadata('web'),
        spec: { replicas: 1, template: { metadata: { labels: { app: 'web' } }, spec: podSpec(2, false) } },
      },
    },
    {
      name: 'large deployment',
      object: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: metadata('big'),
        spec: { replicas: 5, template: { metadata: { labels: { app: 'big' } }, spec: podSpec(120, true) } },
      },
    },
  ];
}

/** One expression per cost rule of runtimecost.go and library/cost.go. */
export const RULE_EXPRESSIONS: string[] = [
  '1 + 2 == 3',
  'object.spec.replicas < 5',
  'has(object.spec.replicas) && has(object.metadata.labels)',
  "object.metadata.name == 'big'",
  "'a' in ['a', 'b']",
  "object.metadata.name in ['web', 'big']",
  '[object.metadata.name, object.kind].size() == 2',
  "{'a': object.metadata.name}.size() == 1",
  "object.metadata.name.startsWith('b') || object.metadata.name.endsWith('b')",
  "object.metadata.name.contains('i')",
  "object.metadata.name.matches('^[a-z]+$')",
  "object.metadata.name + '-suffix' != ''",
  'object.metadata.labels.app.size() > 0',
  'object.metadata.name.lowerAscii() == object.metadata.name.upperAscii().lowerAscii()',
  "object.metadata.name.replace('b', 'c').split('i').join('-') != ''",
  "object.metadata.name.find('[a-z]+') != '' && object.metadata.name.findAll('[a-z]').size() > 0",
  "object.metadata.name.indexOf('i') >= 0 && object.metadata.name.substring(1) != '' && object.metadata.name.trim() != ''",
  "object.metadata.name.size() > 1 ? object.kind != '' : object.kind == ''",
  'int(string(object.spec.replicas)) >= 0',
  "object.metadata.labels.exists(k, k.startsWith('app'))",
  "object.metadata.labels.all(k, object.metadata.labels[k] != '')",
  "object.metadata.labels.exists_one(k, k == 'app')",
  'object.metadata.labels.map(k, k).size() > 0',
  "object.metadata.labels.filter(k, k.contains('.')).size() >= 0",
  '[1, 2, 3].map(x, x * 2).exists(x, x == 4)',
  "quantity('100m').isLessThan(quantity('1'))",
  "isQuantity('1Gi') && url('https://example.com/a').getHost() == 'example.com'",
  '[3, 1, 2].sum() == 6 && [1, 2].isSorted() && [1, 2, 3].max() == 3',
  "isIP('10.0.0.1') && cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))",
  'object.kind == "Pod" ? object.spec.containers.all(c, c.image != "") : object.spec.template.spec.containers.all(c, c.image != "")',
];

export function costCases(): CostCase[] {
  const cases: CostCase[] = [];
  for (const { name: objectName, object } of objects()) {
    RULE_EXPRESSIONS.forEach((expression, index) =>
      cases.push({
        name: `rule ${index} on ${objectName}: ${expression}`,
        validations: [expression],
        variables: [],
        object,
      }),
    );
    for (const policy of corpusPolicies())
      cases.push({
        name: `${policy.name} on ${objectName}`,
        validations: policy.validations,
        variables: policy.variables,
        object,
      });
  }
  return cases;
}
