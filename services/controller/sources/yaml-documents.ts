import { CORE_SCHEMA, loadAll as loadAllLeniently } from 'js-yaml';
import { Composer, isMap, isScalar, isSeq, LineCounter, Parser, type CST, type Document } from 'yaml';

// Reads the documents of one YAML (or JSON) text within fixed limits, so that no file, however
// hostile, can block the event loop, exhaust memory or overflow the stack: the shape of every
// document (depth, entries per collection) is measured on the parser's token tree, which the
// library builds without recursion, before the recursive composition runs; aliases expand at most
// `maxAliases` times (billion laughs); line numbers come from one line table (no rescan per
// document). What `yaml` refuses but Kubernetes' reader accepts (a double-quoted scalar continued
// at its key's indentation, as Gatekeeper templates write them) is read again with js-yaml.

export const MANIFEST_LIMITS = {
  /** Documents read from one file; the rest of the file is reported, not read. */
  maxDocuments: 5000,
  /** Keys of one mapping or items of one sequence (a ConfigMap holds far fewer). */
  maxCollectionEntries: 10_000,
  /** Nesting of mappings and sequences (CRD schemas, the deepest real manifests, stay under 40). */
  maxDepth: 100,
  /** Alias expansions per document. */
  maxAliases: 100,
} as const;

export type YamlDocument = { line: number; value: unknown } | { line: number; problem: string };

function documentShapeProblem(root: CST.Token | undefined): string | undefined {
  const pending: Array<[CST.Token, number]> = root ? [[root, 1]] : [];
  while (pending.length > 0) {
    const [token, depth] = pending.pop() as [CST.Token, number];
    if (token.type !== 'block-map' && token.type !== 'block-seq' && token.type !== 'flow-collection')
      continue;
    if (depth > MANIFEST_LIMITS.maxDepth)
      return `document nests deeper than ${MANIFEST_LIMITS.maxDepth} levels (limit of the manifest reader); document skipped`;
    if (token.items.length > MANIFEST_LIMITS.maxCollectionEntries)
      return `a mapping or sequence holds more than ${MANIFEST_LIMITS.maxCollectionEntries} entries (limit of the manifest reader); document skipped`;
    for (const item of token.items) {
      if ('key' in item && item.key) pending.push([item.key, depth + 1]);
      if (item.value) pending.push([item.value, depth + 1]);
    }
  }
  return undefined;
}

/**
 * Duplicate keys and keys that are themselves collections, found in one pass: the library's own
 * duplicate check compares every pair of keys of a mapping (40,000 keys took 21 s), so it is turned
 * off and done here with a set per mapping. A collection key (`name: {{ .Release.Name }}` reads as
 * a flow mapping inside a flow mapping) is no Kubernetes field; the library would stringify it and
 * print its own warning on the terminal, so it is this document's problem instead.
 */
function keyProblem(document: Document.Parsed): string | undefined {
  const pending: unknown[] = [document.contents];
  while (pending.length > 0) {
    const node = pending.pop();
    if (isMap(node)) {
      const keys = new Set<unknown>();
      for (const pair of node.items) {
        if (isMap(pair.key) || isSeq(pair.key))
          return 'a mapping key is itself a mapping or sequence (template markup such as {{ }}?)';
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        if (keys.has(key)) return `duplicate key ${JSON.stringify(String(key)).slice(0, 100)} in a mapping`;
        keys.add(key);
        pending.push(pair.value);
      }
    } else if (isSeq(node)) pending.push(...node.items);
  }
  return undefined;
}

function documentValue(document: Document.Parsed, lines: LineCounter): YamlDocument {
  // The line of the document's first node, not of its `---` or leading comments: where a reader
  // looks for a missing kind or name.
  const line = lines.linePos(document.contents?.range[0] ?? document.range[0]).line;
  const error = document.errors[0];
  if (error) return { line: lines.linePos(error.pos[0]).line, problem: error.message };
  const duplicate = keyProblem(document);
  if (duplicate) return { line, problem: duplicate };
  try {
    return { line, value: document.toJS({ maxAliasCount: MANIFEST_LIMITS.maxAliases }) };
  } catch (failure) {
    // An alias bomb or an alias cycle throws here; it stays this document's problem.
    const message = failure instanceof Error ? failure.message : String(failure);
    return {
      line,
      problem: /alias/i.test(message)
        ? `more than ${MANIFEST_LIMITS.maxAliases} alias expansions (an alias bomb?); document skipped`
        : message,
    };
  }
}

interface StrictReading {
  documents: YamlDocument[];
  /** Whether a double-quoted scalar was refused: the case the lenient reader may accept. */
  refusedQuotedScalar: boolean;
  /** The first line of every document, for the documents the lenient reader returns. */
  starts: number[];
}

/** The strict reader: `yaml` within the limits. */
function readStrictly(content: string): StrictReading {
  const lines = new LineCounter();
  // `logLevel: 'error'`: the library prints its warnings on the process's stderr; every problem it
  // could warn about is reported here as the document's own problem instead.
  const composer = new Composer({ uniqueKeys: false, prettyErrors: false, logLevel: 'error' });
  const documents: YamlDocument[] = [];
  const starts: number[] = [];
  let refusedQuotedScalar = false;
  const take = (composed: Iterable<Document.Parsed>) => {
    for (const document of composed) {
      if (document.errors.some((error) => error.message.startsWith('Missing closing "quote')))
        refusedQuotedScalar = true;
      documents.push(documentValue(document, lines));
    }
  };
  for (const token of new Parser(lines.addNewLine).parse(content)) {
    if (token.type !== 'document') {
      take(composer.next(token));
      continue;
    }
    const line = lines.linePos(token.value?.offset ?? token.offset).line;
    starts.push(line);
    if (starts.length > MANIFEST_LIMITS.maxDocuments) {
      documents.push({
        line,
        problem: `more than ${MANIFEST_LIMITS.maxDocuments} documents in one file (limit of the manifest reader); the rest of the file is not read`,
      });
      break;
    }
    const shapeProblem = documentShapeProblem(token.value);
    if (shapeProblem) documents.push({ line, problem: shapeProblem });
    else take(composer.next(token));
  }
  take(composer.end());
  documents.sort((left, right) => left.line - right.line);
  return { documents, refusedQuotedScalar, starts };
}

/**
 * Whether a value read by js-yaml is a plain tree: js-yaml returns an alias as the same object
 * again, which would expand later (JSON.stringify) without any limit. Also bounds its size.
 */
function isPlainTree(value: unknown): boolean {
  const seen = new WeakSet<object>();
  const pending: unknown[] = [value];
  let nodes = 0;
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (seen.has(node) || ++nodes > MANIFEST_LIMITS.maxCollectionEntries * 10) return false;
    seen.add(node);
    pending.push(...Object.values(node));
  }
  return true;
}

/** The lenient reader, for a file the strict one refused: all of it, or nothing. */
function readLeniently(content: string, starts: number[]): YamlDocument[] | undefined {
  let values: unknown[];
  try {
    // The core schema, as `yaml` reads: timestamps stay strings.
    values = loadAllLeniently(content, undefined, { schema: CORE_SCHEMA });
  } catch {
    return undefined;
  }
  if (!values.every(isPlainTree)) return undefined;
  return values.map((value, position) => ({ line: starts[position] ?? 1, value }));
}

/** Every document of `content`: its value, or the problem that kept it from being read. */
export function readYamlDocuments(content: string): YamlDocument[] {
  const strict = readStrictly(content);
  if (!strict.refusedQuotedScalar) return strict.documents;
  return readLeniently(content, strict.starts) ?? strict.documents;
}
