// @ts-check
'use strict';

// Summarises a V8 .heapsnapshot (from `bench/cluster.js ... FILE` or `node --heapsnapshot-signal`):
// self size by constructor, and the largest retainers by retained size (dominator tree), each with
// its chain of dominators so one can see who keeps what. Strong edges only, as DevTools counts.
// node bench/heap-summary.js FILE [rows [edge-name]]: with an edge name (e.g. `index`), also what the
// structure reached through it holds, by path.

const { readFileSync } = require('node:fs');

/**
 * @typedef {{
 *   snapshot: {meta: {node_fields: string[], node_types: [string[]], edge_fields: string[], edge_types: [string[]]}, node_count: number},
 *   nodes: number[], edges: number[], strings: string[],
 * }} HeapSnapshot
 */

/** @param {HeapSnapshot} heap */
function graphOf(heap) {
  const { meta } = heap.snapshot;
  const nodeFieldCount = meta.node_fields.length;
  const edgeFieldCount = meta.edge_fields.length;
  const typeOffset = meta.node_fields.indexOf('type');
  const nameOffset = meta.node_fields.indexOf('name');
  const sizeOffset = meta.node_fields.indexOf('self_size');
  const edgeCountOffset = meta.node_fields.indexOf('edge_count');
  const edgeTypeOffset = meta.edge_fields.indexOf('type');
  const edgeNameOffset = meta.edge_fields.indexOf('name_or_index');
  const edgeTargetOffset = meta.edge_fields.indexOf('to_node');
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const weak = edgeTypes.indexOf('weak');
  const shortcut = edgeTypes.indexOf('shortcut');
  const count = heap.nodes.length / nodeFieldCount;
  const firstEdge = new Uint32Array(count + 1);
  for (let node = 0, edge = 0; node < count; node++) {
    firstEdge[node] = edge;
    edge += heap.nodes[node * nodeFieldCount + edgeCountOffset] * edgeFieldCount;
  }
  firstEdge[count] = heap.edges.length;
  /** @param {number} node */
  const typeOf = (node) => nodeTypes[heap.nodes[node * nodeFieldCount + typeOffset]];
  /** @param {number} node */
  const nameOf = (node) => heap.strings[heap.nodes[node * nodeFieldCount + nameOffset]];
  /** @param {number} node */
  const selfSize = (node) => heap.nodes[node * nodeFieldCount + sizeOffset];
  /** @param {number} node @param {(target: number, edge: number) => void} visit */
  const strongEdges = (node, visit) => {
    for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += edgeFieldCount) {
      const type = heap.edges[edge + edgeTypeOffset];
      if (type === weak || type === shortcut) continue;
      visit(heap.edges[edge + edgeTargetOffset] / nodeFieldCount, edge);
    }
  };
  /** @param {number} edge */
  const edgeName = (edge) => {
    const type = edgeTypes[heap.edges[edge + edgeTypeOffset]];
    const name = heap.edges[edge + edgeNameOffset];
    return type === 'element' || type === 'hidden' ? `[${name}]` : String(heap.strings[name]);
  };
  return { count, typeOf, nameOf, selfSize, strongEdges, edgeName };
}

/** The class a node is counted under: its constructor for objects, its type otherwise. */
function classOf(/** @type {ReturnType<typeof graphOf>} */ graph, /** @type {number} */ node) {
  const type = graph.typeOf(node);
  if (type === 'object' || type === 'closure' || type === 'native') return `${graph.nameOf(node)} (${type})`;
  if (type === 'hidden' || type === 'array' || type === 'code') return `(${type}) ${graph.nameOf(node)}`;
  return `(${type})`;
}

/**
 * Immediate dominators (Cooper, Harvey and Kennedy's iterative algorithm over reverse postorder) and
 * retained sizes.
 * @param {ReturnType<typeof graphOf>} graph
 */
function dominatorsOf(graph) {
  const { count } = graph;
  const postorder = new Int32Array(count).fill(-1);
  const order = new Uint32Array(count);
  const parentEdge = new Int32Array(count).fill(-1);
  /** @type {number[][]} */
  const predecessors = Array.from({ length: count }, () => []);
  let visited = 0;
  const seen = new Uint8Array(count);
  // Iterative depth-first search from the root (node 0).
  /** @type {number[][]} */
  const stack = [[0, 0]];
  seen[0] = 1;
  /** @type {number[][]} */
  const children = [];
  const childrenOf = (/** @type {number} */ node) => {
    /** @type {number[]} */
    const targets = [];
    graph.strongEdges(node, (target, edge) => {
      predecessors[target].push(node);
      targets.push(target);
      if (!seen[target]) parentEdge[target] = parentEdge[target] === -1 ? edge : parentEdge[target];
    });
    return targets;
  };
  children[0] = childrenOf(0);
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const [node, next] = top;
    const targets = children[node];
    if (next < targets.length) {
      top[1]++;
      const target = targets[next];
      if (seen[target]) continue;
      seen[target] = 1;
      children[target] = childrenOf(target);
      stack.push([target, 0]);
    } else {
      stack.pop();
      postorder[node] = visited;
      order[visited++] = node;
      delete children[node];
    }
  }
  const dominator = new Int32Array(count).fill(-1);
  dominator[0] = 0;
  const intersect = (/** @type {number} */ a, /** @type {number} */ b) => {
    while (a !== b) {
      while (postorder[a] < postorder[b]) a = dominator[a];
      while (postorder[b] < postorder[a]) b = dominator[b];
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (let position = visited - 2; position >= 0; position--) {
      const node = order[position];
      let candidate = -1;
      for (const predecessor of predecessors[node]) {
        if (postorder[predecessor] === -1 || dominator[predecessor] === -1) continue;
        candidate = candidate === -1 ? predecessor : intersect(predecessor, candidate);
      }
      if (candidate !== dominator[node]) {
        dominator[node] = candidate;
        changed = true;
      }
    }
  }
  const retained = new Float64Array(count);
  for (let position = 0; position < visited; position++) {
    const node = order[position];
    retained[node] += graph.selfSize(node);
    if (node !== 0) retained[dominator[node]] += retained[node];
  }
  return {
    dominator,
    retained,
    parentEdge,
    reachable: (/** @type {number} */ node) => postorder[node] !== -1,
  };
}

/** @param {string} file @param {number} rows @param {string} [under] */
function summarise(file, rows, under) {
  /** @type {HeapSnapshot} */
  const heap = JSON.parse(readFileSync(file, 'utf8'));
  const graph = graphOf(heap);
  const { dominator, retained, parentEdge, reachable } = dominatorsOf(graph);
  /** @type {Map<string, {count: number, self: number, retained: number}>} */
  const byClass = new Map();
  let total = 0;
  for (let node = 0; node < graph.count; node++) {
    if (!reachable(node)) continue;
    total += graph.selfSize(node);
    const name = classOf(graph, node);
    const entry = byClass.get(name) ?? { count: 0, self: 0, retained: 0 };
    entry.count++;
    entry.self += graph.selfSize(node);
    // Retained by the class: only nodes not dominated by another of the same class count.
    if (classOf(graph, dominator[node]) !== name) entry.retained += retained[node];
    byClass.set(name, entry);
  }
  const MiB = 2 ** 20;
  const lines = [
    `reachable: ${(total / MiB).toFixed(1)} MiB in ${graph.count} nodes`,
    '',
    'by class (self):',
  ];
  for (const [name, entry] of [...byClass].sort((a, b) => b[1].self - a[1].self).slice(0, rows))
    lines.push(
      `${(entry.self / MiB).toFixed(2).padStart(8)} MiB self ${(entry.retained / MiB).toFixed(2).padStart(8)} MiB retained ${String(entry.count).padStart(8)}  ${name}`,
    );
  /** @param {number} node */
  const pathOf = (node) => {
    const names = [];
    for (let at = node, depth = 0; at !== 0 && depth < 8; at = dominator[at], depth++)
      names.unshift(`${parentEdge[at] >= 0 ? graph.edgeName(parentEdge[at]) : '?'}:${classOf(graph, at)}`);
    return names.join(' > ');
  };
  lines.push('', 'largest retainers (retained, excluding the roots):');
  const candidates = [];
  for (let node = 1; node < graph.count; node++)
    if (reachable(node) && retained[node] > MiB && graph.typeOf(node) !== 'synthetic') candidates.push(node);
  for (const node of candidates.sort((a, b) => retained[b] - retained[a]).slice(0, rows))
    lines.push(`${(retained[node] / MiB).toFixed(2).padStart(8)} MiB  ${pathOf(node)}`);
  if (under)
    lines.push('', ...breakdownUnder(graph, { dominator, parentEdge, retained, reachable }, under, rows));
  return lines.join('\n');
}

/**
 * Self sizes of everything dominated by the largest node reached through an edge named `under`
 * (e.g. `index`), grouped by the path of edge names from it (indices and Map slots folded), so the
 * parts of a structure show: `byNamespace > [] > [] > summary > []`.
 * @param {ReturnType<typeof graphOf>} graph
 * @param {ReturnType<typeof dominatorsOf>} tree
 * @param {string} under
 * @param {number} rows
 */
function breakdownUnder(graph, { dominator, parentEdge, retained, reachable }, under, rows) {
  const MiB = 2 ** 20;
  let top = -1;
  for (let node = 1; node < graph.count; node++)
    if (
      reachable(node) &&
      parentEdge[node] >= 0 &&
      graph.edgeName(parentEdge[node]) === under &&
      (top === -1 || retained[node] > retained[top])
    )
      top = node;
  if (top === -1) return [`no node reached through an edge named ${under}`];
  /** @type {Map<string, {count: number, self: number}>} */
  const byPath = new Map();
  const fold = (/** @type {string} */ name) => (/^\[\d+\]$/.test(name) || /^\d+$/.test(name) ? '[]' : name);
  for (let node = 0; node < graph.count; node++) {
    if (!reachable(node)) continue;
    const names = [];
    let at = node;
    while (at !== top && at !== 0) {
      names.unshift(parentEdge[at] >= 0 ? fold(graph.edgeName(parentEdge[at])) : '?');
      at = dominator[at];
    }
    if (at !== top) continue;
    const key = `${names
      .filter((name) => name !== 'table')
      .slice(0, 6)
      .join(' > ')} :: ${classOf(graph, node)}`;
    const entry = byPath.get(key) ?? { count: 0, self: 0 };
    entry.count++;
    entry.self += graph.selfSize(node);
    byPath.set(key, entry);
  }
  const lines = [`under ${under} (self size by path, first 6 edges):`];
  for (const [key, entry] of [...byPath].sort((a, b) => b[1].self - a[1].self).slice(0, rows))
    lines.push(`${(entry.self / MiB).toFixed(2).padStart(8)} MiB ${String(entry.count).padStart(8)}  ${key}`);
  return lines;
}

module.exports = { summarise };

if (require.main === module) {
  const [file, rows = '40', under] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench/heap-summary.js FILE.heapsnapshot [rows]');
    process.exit(2);
  }
  console.log(summarise(file, Number(rows), under));
}
