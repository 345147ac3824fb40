/**
 * Clustering of an HLO graph by op_name scope, so a 24-layer model reads as its layers.
 *
 * 1. Each node's scope path comes from its op_name (scope.ts); nodes without one (fusions
 *    XLA made without metadata, tuples) take the scope most of their operands (else users)
 *    have.  A scope every node shares (`jit(loss)`) is dropped: one box around everything
 *    says nothing.
 * 2. Scopes form a tree; nodes are direct members of their innermost scope.
 *    In a program traced with call scopes (`block#2`: the third call of `block`, see
 *    scope.ts) a scope is a call (an *instance*: name `block`, index 2), a user's
 *    `jax.named_scope` or the forward / backward half; JAX's own scopes (its jitted
 *    helpers, einsum specs, `while/body`) are dropped, their ops belong to the call around
 *    them.  Without call scopes (older payloads, code without functions) every scope is
 *    kept, as XLA named it.  Nothing is guessed: no layers are cut out of a flat scope.
 * 3. Parameters form one group, constants another.
 *
 * What is drawn with some clusters open is visible.ts's.
 */

import type { GraphIndex } from './graph';
import {
  isUserScope,
  scopePath,
  type Direction,
  type ScopeSegment
} from './scope';

/** scope: an op_name scope; instance: one call `NAME#K`; group: parameters or constants */
export type ClusterKind = 'scope' | 'instance' | 'group';

export interface Cluster {
  id: string;
  label: string;
  kind: ClusterKind;
  /** the scope's own name (`block`), the group's (`parameters`) */
  name: string;
  /** K of an instance `NAME#K`, else null */
  index: number | null;
  /** forward / backward half of a gradient (inherited from the scopes around it) */
  dir: Direction;
  /** the same for the forward and the backward of one call: its path without directions */
  pair: string;
  parent: number;
  children: number[];
  /** direct member nodes */
  members: number[];
  /** all nodes under it */
  size: number;
  /** sum of members' bytes_moved (estimate) */
  bytesMoved: number;
}

export interface ClusterTree {
  clusters: Cluster[];
  /** top-level clusters and nodes (nodes in no cluster) */
  topClusters: number[];
  topNodes: number[];
  /** innermost cluster of each node, -1: none */
  nodeCluster: Int32Array;
}

function inferMissingScopes(
  g: GraphIndex,
  paths: (ScopeSegment[] | null)[]
): void {
  // null: a group node (parameter/constant), never given a scope; [] with no op_name: unknown
  const n = g.nodes.length;
  const known = paths.map(
    (p, i) => p !== null && (p.length > 0 || g.opNames[i] !== '')
  );
  const preds: number[][] = Array.from({ length: n }, () => []);
  const succs: number[][] = Array.from({ length: n }, () => []);
  for (let e = 0; e < g.src.length; e++) {
    preds[g.dst[e]].push(g.src[e]);
    succs[g.src[e]].push(g.dst[e]);
  }
  const pick = (cands: number[]): ScopeSegment[] | null => {
    const votes = new Map<string, { path: ScopeSegment[]; n: number }>();
    for (const c of cands) {
      if (!known[c]) {
        continue;
      }
      const p = paths[c] as ScopeSegment[];
      const key = p.map(s => s.key).join('/');
      const v = votes.get(key);
      if (v) {
        v.n++;
      } else {
        votes.set(key, { path: p, n: 1 });
      }
    }
    let best: { path: ScopeSegment[]; n: number } | null = null;
    for (const v of votes.values()) {
      if (!best || v.n > best.n) {
        best = v;
      }
    }
    return best ? best.path : null;
  };
  for (let pass = 0; pass < 4; pass++) {
    let changed = false;
    const order =
      pass % 2 === 0 ? [...Array(n).keys()] : [...Array(n).keys()].reverse();
    for (const i of order) {
      if (known[i] || paths[i] === null) {
        continue;
      }
      const p = pick(preds[i]) ?? pick(succs[i]);
      if (p) {
        paths[i] = p;
        known[i] = true;
        changed = true;
      }
    }
    if (!changed) {
      break;
    }
  }
}

/**
 * A call-scoped path with JAX's own scopes taken out (see `isUserScope`); the direction a
 * dropped segment carried (`jvp(jit(f))`) goes to the next kept one, or becomes a plain
 * forward / backward segment, so the two halves never merge.
 */
function userPath(p: ScopeSegment[]): ScopeSegment[] {
  const out: ScopeSegment[] = [];
  let inherited: Direction = null;
  let pending: Direction = null;
  for (const seg of p) {
    if (!isUserScope(seg)) {
      if (seg.dir && seg.dir !== inherited) {
        pending = seg.dir;
      }
      continue;
    }
    if (seg.dir) {
      inherited = seg.dir;
      pending = null;
      out.push(seg);
    } else if (pending) {
      out.push({ ...seg, key: `${seg.key}@${pending}`, dir: pending });
      inherited = pending;
      pending = null;
    } else {
      out.push(seg);
    }
  }
  if (pending) {
    out.push({
      key: `@${pending}`,
      name: pending === 'fwd' ? 'forward' : 'backward',
      index: null,
      dir: pending
    });
  }
  return out;
}

/**
 * A scope path per node (phase 1); null for parameters and constants (groups, phase 3).
 * `scoped`: the program was traced with call scopes (some segment is `NAME#K`).
 */
function scopePaths(g: GraphIndex): {
  paths: (ScopeSegment[] | null)[];
  scoped: boolean;
} {
  let paths: (ScopeSegment[] | null)[] = g.nodes.map((node, i) =>
    node.kind === 'parameter' || node.kind === 'constant'
      ? null
      : scopePath(g.opNames[i])
  );
  const scoped = paths.some(p => p?.some(s => s.index !== null) ?? false);
  if (scoped) {
    paths = paths.map(p => (p === null ? null : userPath(p)));
  }
  inferMissingScopes(g, paths);
  dropSharedHead(paths);
  return { paths, scoped };
}

/** Drop leading scopes every scoped node shares (nodes directly in one become loose). */
function dropSharedHead(paths: (ScopeSegment[] | null)[]): void {
  for (;;) {
    let head: string | null = null;
    let all = true;
    let any = false;
    for (const p of paths) {
      if (p === null) {
        continue;
      }
      if (p.length < 1) {
        all = false;
        break;
      }
      any = true;
      if (head === null) {
        head = p[0].key;
      } else if (p[0].key !== head) {
        all = false;
        break;
      }
    }
    if (!all || !any) {
      return;
    }
    for (let i = 0; i < paths.length; i++) {
      const p = paths[i];
      if (p) {
        paths[i] = p.slice(1);
      }
    }
  }
}

/**
 * The scopes that hold nothing but one inner scope: drawn as one box with both names
 * (`while / body / cond`), not as frames nested around one another.  A call (`block#2`)
 * always keeps its own box: it is what the user looks for.
 */
function passThroughScopes(
  paths: (ScopeSegment[] | null)[]
): (key: string, seg: ScopeSegment) => boolean {
  const direct = new Map<string, number>();
  const inner = new Map<string, Set<string>>();
  for (const p of paths) {
    if (p === null) {
      continue;
    }
    let key = '';
    for (const seg of p) {
      const next = key ? `${key}/${seg.key}` : seg.key;
      if (key) {
        let set = inner.get(key);
        if (!set) {
          inner.set(key, (set = new Set()));
        }
        set.add(next);
      }
      key = next;
    }
    if (key) {
      direct.set(key, (direct.get(key) ?? 0) + 1);
    }
  }
  return (key, seg) =>
    seg.index === null && !direct.has(key) && (inner.get(key)?.size ?? 0) === 1;
}

/** A cluster tree being built: clusters are appended, parents before their children. */
class TreeBuilder {
  readonly clusters: Cluster[] = [];
  readonly topClusters: number[] = [];
  readonly topNodes: number[] = [];

  make(
    fields: Pick<Cluster, 'id' | 'kind' | 'name' | 'index' | 'dir' | 'pair'>,
    parent: number
  ): number {
    const c = this.clusters.length;
    this.clusters.push({
      ...fields,
      label: fields.name,
      parent,
      children: [],
      members: [],
      size: 0,
      bytesMoved: 0
    });
    if (parent >= 0) {
      this.clusters[parent].children.push(c);
    } else {
      this.topClusters.push(c);
    }
    return c;
  }
}

/** the word a label adds for a direction (`block 2 · backward`) */
export const dirWord = (d: Direction): string =>
  d === 'fwd' ? 'forward' : d === 'bwd' ? 'backward' : '';

/**
 * 2. The scope tree: each scoped node becomes a direct member of its innermost scope (or
 * a top node); returns the parameters and constants, left for their groups.  `prefix[c]`:
 * the names of the pass-through scopes merged into cluster c, outermost first.
 */
function placeInScopes(
  g: GraphIndex,
  paths: (ScopeSegment[] | null)[],
  t: TreeBuilder
): { params: number[]; consts: number[]; prefix: Map<number, string[]> } {
  const passThrough = passThroughScopes(paths);
  const byPath = new Map<string, number>();
  const params: number[] = [];
  const consts: number[] = [];
  const prefixes = new Map<number, string[]>();
  for (let i = 0; i < paths.length; i++) {
    const p = paths[i];
    if (p === null) {
      (g.nodes[i].kind === 'parameter' ? params : consts).push(i);
      continue;
    }
    let parent = -1;
    let key = '';
    let pair = '';
    let dir: Direction = null;
    let prefix: string[] = [];
    for (const seg of p) {
      key = key ? `${key}/${seg.key}` : seg.key;
      const bare = seg.key.replace(/@(fwd|bwd)$/, '');
      pair = pair ? `${pair}/${bare}` : bare;
      if (seg.dir) {
        dir = seg.dir;
      }
      if (passThrough(key, seg)) {
        prefix.push(seg.name);
        continue;
      }
      let c = byPath.get(key);
      if (c === undefined) {
        c = t.make(
          {
            id: `scope:${key}`,
            kind: seg.index === null ? 'scope' : 'instance',
            name: seg.name,
            index: seg.index,
            dir,
            pair
          },
          parent
        );
        byPath.set(key, c);
        if (prefix.length) {
          prefixes.set(c, prefix);
        }
      }
      prefix = [];
      parent = c;
    }
    if (parent >= 0) {
      t.clusters[parent].members.push(i);
    } else {
      t.topNodes.push(i);
    }
  }
  return { params, consts, prefix: prefixes };
}

/**
 * Labels: the name, its index when a sibling is another call of the same name (`layernorm
 * 1`; a lone `attention` needs none), the pass-through names before it, and the direction
 * when the name does not say it (`block 2 · backward`).
 */
function labelClusters(t: TreeBuilder, prefixes: Map<number, string[]>): void {
  const siblings = (c: number): number[] => {
    const p = t.clusters[c].parent;
    return p >= 0 ? t.clusters[p].children : t.topClusters;
  };
  t.clusters.forEach((cl, c) => {
    let name = cl.name;
    if (
      cl.index !== null &&
      siblings(c).some(
        s =>
          s !== c &&
          t.clusters[s].name === cl.name &&
          t.clusters[s].index !== cl.index
      )
    ) {
      name = `${cl.name} ${cl.index}`;
    }
    const pre = prefixes.get(c);
    if (pre) {
      name = [...pre, name].join(' / ');
    }
    const word = dirWord(cl.dir);
    cl.label = word && cl.name !== word ? `${name} · ${word}` : name;
  });
}

/** 3. Parameters in one group, constants in another (a lone one stays a top node). */
function addGroups(t: TreeBuilder, params: number[], consts: number[]): void {
  for (const [name, members] of [
    ['parameters', params],
    ['constants', consts]
  ] as const) {
    if (members.length >= 2) {
      const c = t.make(
        {
          id: `group:${name}`,
          kind: 'group',
          name,
          index: null,
          dir: null,
          pair: `group:${name}`
        },
        -1
      );
      t.clusters[c].label = `${name} (${members.length})`;
      t.clusters[c].members = members;
    } else {
      t.topNodes.push(...members);
    }
  }
  t.topNodes.sort((a, b) => a - b);
}

/** Each node's innermost cluster, and sizes and bytes summed bottom-up. */
function finishTree(g: GraphIndex, t: TreeBuilder): ClusterTree {
  const { clusters } = t;
  const nodeCluster = new Int32Array(g.nodes.length).fill(-1);
  for (let c = 0; c < clusters.length; c++) {
    for (const i of clusters[c].members) {
      nodeCluster[i] = c;
    }
  }
  // children are created after their parents
  for (let c = clusters.length - 1; c >= 0; c--) {
    const cl = clusters[c];
    cl.size += cl.members.length;
    for (const i of cl.members) {
      cl.bytesMoved += g.nodes[i].bytes_moved;
    }
    if (cl.parent >= 0) {
      clusters[cl.parent].size += cl.size;
      clusters[cl.parent].bytesMoved += cl.bytesMoved;
    }
  }
  const { topClusters, topNodes } = t;
  return { clusters, topClusters, topNodes, nodeCluster };
}

/** The cluster tree of `g`, phase by phase (see the top of this file). */
export function buildClusters(g: GraphIndex): ClusterTree {
  const { paths } = scopePaths(g);
  const t = new TreeBuilder();
  const { params, consts, prefix } = placeInScopes(g, paths, t);
  labelClusters(t, prefix);
  addGroups(t, params, consts);
  return finishTree(g, t);
}

/** Ancestors of cluster c, outermost first, c last. */
export function clusterPath(tree: ClusterTree, c: number): number[] {
  const out: number[] = [];
  for (let k = c; k >= 0; k = tree.clusters[k].parent) {
    out.unshift(k);
  }
  return out;
}

/** how many boxes the first view (and each "open a level") may draw */
export const BOX_BUDGET = 56;

/** Boxes drawn more by opening cluster c (its members and children replace its box). */
function growth(tree: ClusterTree, c: number): number {
  const cl = tree.clusters[c];
  return cl.children.length + cl.members.length - 1;
}

/**
 * Open clusters level by level within a box budget: the folded clusters in `frontier` are
 * a level; it opens whole when its members and children fit in `budget` boxes, and its
 * children are the next level.  A level that does not fit stays folded (some of the 24
 * blocks opened beside folded ones would read as if they were special), except the first,
 * of which the biggest that fit open.  Groups (parameters, constants) stay folded.
 * `visible`: the boxes drawn before.
 */
export function openWithin(
  tree: ClusterTree,
  frontier: Iterable<number>,
  visible: number,
  budget = BOX_BUDGET,
  levels = Infinity
): Set<number> {
  const opened = new Set<number>();
  let level = [...frontier].filter(c => tree.clusters[c].kind !== 'group');
  for (let depth = 0; depth < levels && level.length; depth++) {
    const grow = level.reduce((s, c) => s + growth(tree, c), 0);
    if (visible + grow <= budget) {
      visible += grow;
      level.forEach(c => opened.add(c));
      level = level
        .flatMap(c => tree.clusters[c].children)
        .filter(c => tree.clusters[c].kind !== 'group');
      continue;
    }
    if (opened.size === 0) {
      level.sort((a, b) => tree.clusters[b].size - tree.clusters[a].size);
      for (const c of level) {
        if (visible + growth(tree, c) <= budget) {
          visible += growth(tree, c);
          opened.add(c);
        }
      }
    }
    break;
  }
  return opened;
}

/**
 * The clusters to open first: from the top level, level by level, the biggest first, while
 * the drawing stays within `budget` boxes (a 24-block gradient shows its 24 forward and 24
 * backward blocks, folded).
 */
export function initialExpansion(
  tree: ClusterTree,
  budget = BOX_BUDGET
): Set<number> {
  return openWithin(
    tree,
    tree.topClusters,
    tree.topClusters.length + tree.topNodes.length,
    budget
  );
}
