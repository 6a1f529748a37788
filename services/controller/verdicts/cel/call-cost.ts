import { isCelList, isCelMap } from '@bufbuild/cel';

// Call costs of Kubernetes' runtime CEL cost model (docs/decisions.md, "CEL cost as the API server
// counts it"): cel-go's default costs (github.com/google/cel-go v0.26.0, interpreter/runtimecost.go
// costCall and actualSize) after Kubernetes' library estimator, which cel-go asks first
// (k8s.io/apiserver v0.34.4, pkg/cel/library/cost.go CallCost).

// cel-go v0.26.0 common/cost.go.
const STRING_TRAVERSAL_COST_FACTOR = 0.1;
const REGEX_STRING_LENGTH_COST_FACTOR = 0.25;

const OPAQUE_PREFIX = '\u0000';

/** cel-go's actualSize: strings in code points, lists and maps in entries, everything else 1. */
function actualSize(value: unknown): number {
  if (typeof value === 'string') {
    // Quantities, URLs, IPs and CIDRs are opaque values in Kubernetes (size 1); here they are
    // strings with a private prefix.
    if (value.startsWith(OPAQUE_PREFIX)) return 1;
    return codePointLength(value);
  }
  if (value instanceof Uint8Array) return value.length;
  if (isCelList(value)) return value.size;
  if (isCelMap(value)) return value.size;
  return 1;
}

function codePointLength(text: string): number {
  let length = text.length;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length--;
        index++;
      }
    }
  }
  return length;
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Kubernetes' traversalCost: strings by bytes × 0.1 (truncated), lists and maps by their items. */
function traversalCost(value: unknown): number {
  if (typeof value === 'string') return Math.floor(utf8Length(value) * STRING_TRAVERSAL_COST_FACTOR);
  if (value instanceof Uint8Array) return Math.floor(value.length * STRING_TRAVERSAL_COST_FACTOR);
  if (isCelList(value)) {
    let cost = 0;
    for (const item of value) cost += traversalCost(item);
    return cost;
  }
  if (isCelMap(value)) {
    let cost = 0;
    for (const [key, item] of value) cost += traversalCost(key) + traversalCost(item);
    return cost;
  }
  return 1;
}

const traversal = (size: number, factor = 1) => Math.ceil(size * factor * STRING_TRAVERSAL_COST_FACTOR);

function regexCost(text: unknown, pattern: unknown): number {
  const textCost = Math.ceil((1 + actualSize(text)) * STRING_TRAVERSAL_COST_FACTOR);
  return textCost * Math.ceil(actualSize(pattern) * REGEX_STRING_LENGTH_COST_FACTOR);
}

const isText = (value: unknown) => typeof value === 'string' || value instanceof Uint8Array;

// Authorizer builders and accessors, IP/CIDR accessors, format.named, quantity, semver and URL
// methods: a nominal cost of 1 in library/cost.go.
const NOMINAL_COST_FUNCTIONS = new Set([
  'serviceAccount',
  'path',
  'group',
  'resource',
  'subresource',
  'namespace',
  'name',
  'allowed',
  'reason',
  'error',
  'errored',
  'masked',
  'prefixLength',
  'family',
  'isUnspecified',
  'isLoopback',
  'isLinkLocalMulticast',
  'isLinkLocalUnicast',
  'isGlobalUnicast',
  'format.named',
  'sign',
  'asInteger',
  'isInteger',
  'asApproximateFloat',
  'isGreaterThan',
  'isLessThan',
  'compareTo',
  'add',
  'sub',
  'major',
  'minor',
  'patch',
  'getScheme',
  'getHostname',
  'getHost',
  'getPort',
  'getEscapedPath',
  'getQuery',
]);

/** Kubernetes' library estimator (library/cost.go CallCost); undefined when it has no estimate. */
function kubernetesCallCost(name: string, args: readonly unknown[], result: unknown): number | undefined {
  if (NOMINAL_COST_FUNCTIONS.has(name)) return 1;
  switch (name) {
    case 'check':
      return 350_000;
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
      return args.length > 0 ? traversalCost(args[0]) : 0;
    case 'url':
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
    case 'jsonpatch.escapeKey':
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
    case 'semver':
    case 'isSemver':
      return args.length >= 1 ? traversal(actualSize(args[0])) : undefined;
    case 'replace':
    case 'split':
      return args.length >= 1 ? traversal(actualSize(args[0]), 2) : undefined;
    case 'join':
      return args.length >= 1 ? traversal(actualSize(result), 2) : undefined;
    case 'find':
    case 'findAll':
      return args.length >= 2 ? regexCost(args[0], args[1]) : undefined;
    case 'ip':
      // `cidr.ip()` reads a field (nominal); `ip(string)` parses.
      if (args.length >= 1)
        return typeof args[0] === 'string' && !args[0].startsWith(OPAQUE_PREFIX)
          ? traversal(actualSize(args[0]))
          : 1;
      return undefined;
    case 'ip.isCanonical':
      return args.length >= 1 ? traversal(actualSize(args[0]), 2) : undefined;
    case 'containsIP':
    case 'containsCIDR': {
      if (args.length < 2) return undefined;
      const cidrSize = actualSize(args[0]);
      let cost = traversal(cidrSize + cidrSize);
      if (name === 'containsCIDR') cost += traversal(cidrSize) + 1;
      if (typeof args[1] === 'string' && !args[1].startsWith(OPAQUE_PREFIX))
        cost += traversal(actualSize(args[1]));
      return cost;
    }
    case '_==_':
      // Kubernetes' opaque types compare at unit cost.
      if (args.length === 2 && typeof args[0] === 'string' && args[0].startsWith(OPAQUE_PREFIX)) return 1;
      return undefined;
    default:
      return undefined;
  }
}

/** cel-go's default call costs (runtimecost.go costCall), after Kubernetes' estimator. */
export function callCost(name: string, args: readonly unknown[], result: unknown): number {
  const kubernetes = kubernetesCallCost(name, args, result);
  if (kubernetes !== undefined) return kubernetes;
  switch (name) {
    case 'startsWith':
    case 'endsWith':
    case 'strings.quote':
    case 'format':
      return isText(args[0]) ? traversal(actualSize(args[0])) : 1;
    case 'bytes':
    case 'string':
      // string_to_bytes and bytes_to_string traverse; other conversions are O(1).
      return isText(args[0]) && typeof args[0] !== typeof result ? traversal(actualSize(args[0])) : 1;
    case '@in':
      return isCelList(args[1]) ? actualSize(args[1]) : 1;
    case '_<_':
    case '_>_':
    case '_<=_':
    case '_>=_':
      if (!(isText(args[0]) && isText(args[1]))) return 1;
      return traversal(Math.min(actualSize(args[0]), actualSize(args[1])));
    case '_==_':
    case '_!=_':
      return traversal(Math.min(actualSize(args[0]), actualSize(args[1])));
    case '_+_':
      if (isText(args[0]) && isText(args[1])) return traversal(actualSize(args[0]) + actualSize(args[1]));
      return 1;
    case 'matches':
      return regexCost(args[0], args[1]);
    case 'contains':
      if (isText(args[0])) return traversal(actualSize(args[0])) * traversal(actualSize(args[1]));
      return 1;
    default:
      return 1;
  }
}
