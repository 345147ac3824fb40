import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { buildClusters, initialExpansion } from '../src/hlo/cluster';
import { indexGraph } from '../src/hlo/graph';
import { GraphModel } from '../src/hlo/model';
import { splitRepeats } from '../src/hlo/repeats';
import {
  displayName,
  normaliseSegment,
  scopePath,
  splitOpName
} from '../src/hlo/scope';
import type { HloGraph, HloNode, UnpackedHloPayload } from '../src/hlo/types';
import { visibleGraph } from '../src/hlo/visible';
import { hloNode } from './hlo-synthetic';

const fixture = (name: string): unknown =>
  JSON.parse(
    readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')
  );

const node = hloNode;

describe('op_name scopes', () => {
  it('splits at top-level slashes only and drops the primitive', () => {
    expect(splitOpName('jit(loss)/jvp(jit(layer))/dot_general')).toEqual([
      'jit(loss)',
      'jvp(jit(layer))',
      'dot_general'
    ]);
    expect(splitOpName('jit(f)/vmap(jit(a/b))/add')).toEqual([
      'jit(f)',
      'vmap(jit(a/b))',
      'add'
    ]);
    expect(
      scopePath('jit(loss)/jvp(jit(layer))/dot_general').map(s => s.key)
    ).toEqual(['jit(loss)', 'jit(layer)@fwd']);
    expect(scopePath('')).toEqual([]);
    expect(displayName('jit(layer)')).toBe('layer');
  });

  it('pairs the forward and backward of one function', () => {
    const fwd = scopePath('jit(loss)/jvp(jit(layer))/mul');
    const bwd = scopePath('jit(loss)/transpose(jvp(jit(layer)))/mul');
    expect(fwd[1]).toMatchObject({ name: 'layer', dir: 'fwd' });
    expect(bwd[1]).toMatchObject({ name: 'layer', dir: 'bwd' });
    expect(fwd[1].key).not.toBe(bwd[1].key);
    // a function that was not jitted: the bare wrappers become forward / backward scopes
    expect(normaliseSegment('jvp()')).toMatchObject({
      name: 'forward',
      dir: 'fwd'
    });
    expect(normaliseSegment('transpose(jvp())')).toMatchObject({
      name: 'backward',
      dir: 'bwd'
    });
    expect(normaliseSegment('pjit(g)')).toMatchObject({
      key: 'pjit(g)',
      dir: null
    });
  });
});

describe('clusters', () => {
  it('clusters by scope, groups parameters and constants, infers unnamed fusions', () => {
    const g: HloGraph = {
      computation: 'main',
      nodes: [
        node('p0', { kind: 'parameter', opcode: 'parameter', bytes_moved: 0 }),
        node('p1', { kind: 'parameter', opcode: 'parameter', bytes_moved: 0 }),
        node('c0', { kind: 'constant', opcode: 'constant' }),
        node('c1', { kind: 'constant', opcode: 'constant' }),
        node('a', { op_name: 'jit(f)/jit(enc)/dot_general' }),
        node('b', { op_name: 'jit(f)/jit(enc)/add' }),
        node('u'), // no op_name: takes its operand's scope
        node('d', { op_name: 'jit(f)/jit(dec)/mul' })
      ],
      edges: [
        ['p0', 'a'],
        ['p1', 'a'],
        ['c0', 'b'],
        ['a', 'b'],
        ['b', 'u'],
        ['u', 'd'],
        ['c1', 'd']
      ].map(([src, dst]) => ({ src, dst, shape: 'f32[4]', bytes: 16 }))
    };
    const gi = indexGraph(g);
    const tree = buildClusters(gi);
    const labels = tree.clusters.map(c => c.label).sort();
    expect(labels).toEqual(['constants (2)', 'dec', 'enc', 'parameters (2)']); // jit(f) shared by all: dropped
    const enc = tree.clusters.find(c => c.label === 'enc');
    expect(enc?.members.map(i => gi.nodes[i].id)).toEqual(['a', 'b', 'u']);
    // all folded: 4 boxes, edges aggregated between them
    const vg = visibleGraph(gi, tree, new Set());
    expect(vg.items.length).toBe(4);
    const names = (k: number): string => tree.clusters[vg.items[k].ref].label;
    const edges = Array.from(
      vg.src,
      (s, e) => `${names(s)}->${names(vg.dst[e])}:${vg.count[e]}`
    ).sort();
    expect(edges).toEqual([
      'constants (2)->dec:1',
      'constants (2)->enc:1',
      'enc->dec:1',
      'parameters (2)->enc:2'
    ]);
    // open enc: its three nodes appear, inside a frame
    const open = visibleGraph(gi, tree, new Set([tree.clusters.indexOf(enc!)]));
    expect(open.items.length).toBe(6);
    expect(open.frames[0].items.length).toBe(3);
  });

  it('cuts a flat scope into repeats at a recurring source line', () => {
    // 6 "layers" of 5 ops; lines 10 (twice), 11, 12, 13 per layer; a prelude op first
    const nodes: HloNode[] = [
      node('pre', { sources: [{ file: 'm.py', line: 3, function: 'loss' }] })
    ];
    for (let l = 0; l < 6; l++) {
      for (const line of [10, 11, 10, 12, 13]) {
        nodes.push(
          node(`n${l}_${nodes.length}`, {
            sources: [{ file: 'm.py', line, function: 'make.<locals>.block' }]
          })
        );
      }
    }
    const gi = indexGraph({ computation: 'm', nodes, edges: [] });
    const segs = splitRepeats(
      gi,
      nodes.map((_, i) => i)
    );
    expect(segs?.map(s => s.length)).toEqual([6, 5, 5, 5, 5, 5]);
  });

  it('reads the 4-layer transformer gradient as its layers', () => {
    const graph = fixture('hlo-4layer-graph.json') as HloGraph;
    const gi = indexGraph(graph);
    const tree = buildClusters(gi);
    const repeats = tree.clusters.filter(c => c.kind === 'repeat');
    const fwd = repeats.filter(c => c.dir === 'fwd').map(c => c.label);
    const bwd = repeats.filter(c => c.dir === 'bwd').map(c => c.label);
    expect(fwd).toEqual([
      'block #1 · forward',
      'block #2 · forward',
      'block #3 · forward',
      'block #4 · forward'
    ]);
    expect(bwd).toEqual([
      'block #4 · backward',
      'block #3 · backward',
      'block #2 · backward',
      'block #1 · backward'
    ]);
    const vg = visibleGraph(gi, tree, initialExpansion(tree));
    // 8 layer boxes, the parameter group and a handful of loose ends: not 20 parameter boxes
    expect(vg.items.length).toBeLessThanOrEqual(14);
    expect(
      vg.items.filter(
        it => it.kind === 'node' && gi.nodes[it.ref].kind === 'parameter'
      )
    ).toEqual([]);
  });
});

describe('graph model', () => {
  it('reveals a node inside folded clusters and folds nested clusters together', () => {
    const graph = fixture('hlo-4layer-graph.json') as HloGraph;
    const payload = {
      graphs: { [graph.computation]: graph }
    } as unknown as UnpackedHloPayload;
    const m = new GraphModel(payload, graph.computation);
    const before = m.visibleCount;
    const i = m.g.nodes.findIndex(
      n =>
        n.kind === 'fusion' &&
        m.tree.nodeCluster[m.g.nodes.indexOf(n)] >= 0 &&
        m.tree.clusters[m.tree.nodeCluster[m.g.nodes.indexOf(n)]].kind ===
          'repeat'
    );
    expect(m.reveal(i)).toBe(true);
    expect(m.vg.items[m.vg.rep[i]]).toEqual({ kind: 'node', ref: i });
    expect(m.visibleCount).toBeGreaterThan(before);
    const top = m.tree.clusters.findIndex(c => c.kind === 'scope');
    m.toggle(top); // fold the whole forward (or backward) scope
    expect(m.visibleCount).toBeLessThan(before);
    m.expandAll();
    expect(m.visibleCount).toBe(m.g.nodes.length);
    m.collapseAll();
    expect(m.visibleCount).toBe(before);
  });
});

describe('repeats are only cut where the program repeats', () => {
  it('does not halve a straight-line program whose every line runs twice (dot + its fused op)', () => {
    // a real 49-op forward program (24 different lines, each a dot and an elementwise
    // fusion, plus a helper called three times): no loop, so no layers
    const graph = fixture('hlo-straight-graph.json') as HloGraph;
    const gi = indexGraph(graph);
    const tree = buildClusters(gi);
    expect(
      tree.clusters.filter(c => c.kind === 'repeat').map(c => c.label)
    ).toEqual([]);
  });

  it('does not cut at a helper called at irregular places', () => {
    // 60 distinct lines; a helper line (99) runs at positions 5, 12 and 50
    const nodes: HloNode[] = [];
    for (let i = 0; i < 60; i++) {
      const line = i === 5 || i === 12 || i === 50 ? 99 : 100 + i;
      nodes.push(
        node(`n${i}`, { sources: [{ file: 'm.py', line, function: 'f' }] })
      );
    }
    const gi = indexGraph({ computation: 'm', nodes, edges: [] });
    expect(
      splitRepeats(
        gi,
        nodes.map((_, i) => i)
      )
    ).toBeNull();
  });

  it('does not cut lines strewn without order in a 10,000-op scope, and finds 250 layers in one', () => {
    // the wall time is in bench/algorithms.bench.ts (splitRepeats exposes no count of its
    // work; MAX_CHECKS in repeats.ts bounds how many candidate cuts it reads in full)
    let seed = 3;
    const rnd = (): number => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const strewn: HloNode[] = [];
    for (let i = 0; i < 10000; i++) {
      strewn.push(
        node(`r${i}`, {
          sources: [
            { file: 'm.py', line: Math.floor(rnd() * 2000), function: 'f' }
          ]
        })
      );
    }
    expect(
      splitRepeats(
        indexGraph({ computation: 'm', nodes: strewn, edges: [] }),
        strewn.map((_, i) => i)
      )
    ).toBeNull();
    // 250 real layers of 40 lines each are still found
    const layered: HloNode[] = [];
    for (let i = 0; i < 10000; i++) {
      layered.push(
        node(`l${i}`, {
          sources: [{ file: 'm.py', line: 10 + (i % 40), function: 'f' }]
        })
      );
    }
    expect(
      splitRepeats(
        indexGraph({ computation: 'm', nodes: layered, edges: [] }),
        layered.map((_, i) => i)
      )?.length
    ).toBe(250);
  });

  it('still cuts two layers of a Python loop', () => {
    const nodes: HloNode[] = [];
    for (let l = 0; l < 2; l++) {
      for (let j = 0; j < 25; j++) {
        nodes.push(
          node(`n${l}_${j}`, {
            sources: [{ file: 'm.py', line: 10 + j, function: 'block' }]
          })
        );
      }
    }
    const gi = indexGraph({ computation: 'm', nodes, edges: [] });
    expect(
      splitRepeats(
        gi,
        nodes.map((_, i) => i)
      )?.map(s => s.length)
    ).toEqual([25, 25]);
  });
});

describe('no boxes that say nothing', () => {
  const edges = (pairs: string[][]): HloGraph['edges'] =>
    pairs.map(([src, dst]) => ({ src, dst, shape: 'f32[4]', bytes: 16 }));

  it('drops the program scope even when some nodes sit directly in it (a one-op program)', () => {
    // jax.jit(lambda x: x + 1): one add, op_name jit(<lambda>)/add
    const g: HloGraph = {
      computation: 'main.1',
      nodes: [
        node('x.1', { kind: 'parameter', opcode: 'parameter', bytes_moved: 0 }),
        node('add.2', { op_name: 'jit(<lambda>)/add' })
      ],
      edges: edges([['x.1', 'add.2']])
    };
    const tree = buildClusters(indexGraph(g));
    expect(tree.clusters.map(c => c.label)).toEqual([]);
    expect(tree.topNodes).toEqual([0, 1]);
    // and a program whose ops are partly in a named scope: the program box goes, the scope stays
    const h: HloGraph = {
      computation: 'main.2',
      nodes: [
        node('a', { op_name: 'jit(f)/sin' }),
        node('b', { op_name: 'jit(f)/enc/mul' }),
        node('c', { op_name: 'jit(f)/cos' })
      ],
      edges: edges([
        ['a', 'b'],
        ['b', 'c']
      ])
    };
    const th = buildClusters(indexGraph(h));
    expect(th.clusters.map(c => c.label)).toEqual(['enc']);
    expect(th.topNodes).toEqual([0, 2]);
  });

  it('merges a chain of scopes that only hold one scope (a cond branch in a while body)', () => {
    // region_1.3 of a while_loop(cond(...)) program, op_names as XLA keeps them
    const g: HloGraph = {
      computation: 'region_1.3',
      nodes: [
        node('while.0', {
          kind: 'parameter',
          opcode: 'parameter',
          bytes_moved: 0,
          op_name: 'jit(wc)/while'
        }),
        node('get-tuple-element', {
          kind: 'plumbing',
          opcode: 'get-tuple-element',
          op_name: 'jit(wc)/while'
        }),
        node('wrapped_cosine', {
          op_name: 'jit(wc)/while/body/cond/branch_0_fun/cos'
        }),
        node('tuple.5', {
          kind: 'plumbing',
          opcode: 'tuple',
          op_name: 'jit(wc)/while'
        })
      ],
      edges: edges([
        ['while.0', 'get-tuple-element'],
        ['get-tuple-element', 'wrapped_cosine'],
        ['wrapped_cosine', 'tuple.5']
      ])
    };
    const tree = buildClusters(indexGraph(g));
    expect(tree.clusters.map(c => c.label)).toEqual([
      'while / body / cond / branch_0_fun'
    ]);
    expect(tree.clusters[0].members).toEqual([2]);
  });
});
