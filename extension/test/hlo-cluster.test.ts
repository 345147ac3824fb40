import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { BOX_BUDGET, buildClusters } from '../src/hlo/cluster';
import { indexGraph } from '../src/hlo/graph';
import { GraphModel } from '../src/hlo/model';
import { graphTitles } from '../src/hlo/sections';
import {
  displayName,
  normaliseSegment,
  scopePath,
  splitOpName
} from '../src/hlo/scope';
import type { HloGraph, UnpackedHloPayload } from '../src/hlo/types';
import { visibleGraph } from '../src/hlo/visible';
import { gradientGraph, hloNode } from './hlo-synthetic';

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
    // the groups draw no edges: their readers count them
    expect(edges).toEqual(['enc->dec:1']);
    const reads = Object.fromEntries(
      vg.items.map((it, k) => [names(k), vg.inputs[k]])
    );
    expect(reads).toEqual({
      'constants (2)': 0,
      dec: 1,
      enc: 3,
      'parameters (2)': 0
    });
    // open enc: its three nodes appear, inside a frame
    const open = visibleGraph(gi, tree, new Set([tree.clusters.indexOf(enc!)]));
    expect(open.items.length).toBe(6);
    expect(open.frames[0].items.length).toBe(3);
  });

  it('invents no layers: the 4-layer gradient without call scopes clusters only by its scopes', () => {
    // traced before call scopes: a Python loop over plain functions leaves one flat scope
    // per half; no source-line guessing cuts it into "block #k" (it once made a block #47
    // of a 24-block model)
    const graph = fixture('hlo-4layer-graph.json') as HloGraph;
    const gi = indexGraph(graph);
    const tree = buildClusters(gi);
    const scopes = new Set<string>();
    for (let i = 0; i < gi.nodes.length; i++) {
      for (const seg of scopePath(gi.opNames[i])) {
        scopes.add(seg.name);
      }
    }
    for (const c of tree.clusters) {
      if (c.kind === 'group') {
        continue;
      }
      expect(c.kind).toBe('scope');
      expect(scopes.has(c.name)).toBe(true);
      expect(c.label).not.toMatch(/#\d/);
    }
  });
});

describe('graph model', () => {
  it('reveals a node inside folded clusters and folds nested clusters together', () => {
    const graph = gradientGraph(4);
    const payload = {
      graphs: { [graph.computation]: graph }
    } as unknown as UnpackedHloPayload;
    const m = new GraphModel(payload, graph.computation);
    const before = m.visibleCount;
    const i = m.g.nodes.findIndex(
      n =>
        n.kind === 'fusion' &&
        m.tree.nodeCluster[m.g.nodes.indexOf(n)] >= 0 &&
        m.tree.clusters[m.tree.nodeCluster[m.g.nodes.indexOf(n)]].name ===
          'attention'
    );
    expect(m.reveal(i)).toBe(true);
    expect(m.vg.items[m.vg.rep[i]]).toEqual({ kind: 'node', ref: i });
    expect(m.visibleCount).toBeGreaterThan(before);
    m.toggle(m.tree.topClusters[0]); // fold the whole forward half
    expect(m.visibleCount).toBeLessThan(before);
    m.expandAll();
    expect(m.visibleCount).toBe(m.g.nodes.length);
    m.collapseAll();
    expect(m.visibleCount).toBe(before);
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

describe('call scopes (NAME#K from the workbench trace)', () => {
  const edges = (pairs: string[][], bytes = 16): HloGraph['edges'] =>
    pairs.map(([src, dst]) => ({ src, dst, shape: 'f32[4]', bytes }));

  it('reads NAME#K as an instance, and the scope XLA joined op_names share', () => {
    expect(normaliseSegment('transpose(jvp(block#2))')).toMatchObject({
      name: 'block',
      index: 2,
      dir: 'bwd',
      key: 'block#2@bwd'
    });
    expect(normaliseSegment('attn')).toMatchObject({
      name: 'attn',
      index: null
    });
    expect(
      scopePath(
        'jit(g)/transpose(jvp(loss#0))/mul;jit(g)/transpose(jvp(loss#0))/broadcast_in_dim'
      ).map(s => s.key)
    ).toEqual(['jit(g)', 'loss#0@bwd']);
    expect(
      scopePath('jit(f)/block#1/mlp#0/add;jit(f)/block#1/attn/mul').map(
        s => s.key
      )
    ).toEqual(['jit(f)', 'block#1']);
  });

  it('makes one instance per call, paired forward and backward, nested, named by their code', () => {
    const B = 3;
    const g = indexGraph(gradientGraph(B));
    const tree = buildClusters(g);
    const blocks = tree.clusters.filter(c => c.name === 'block');
    expect(blocks.every(c => c.kind === 'instance')).toBe(true);
    const fwd = blocks.filter(c => c.dir === 'fwd').map(c => c.index);
    const bwd = blocks.filter(c => c.dir === 'bwd').map(c => c.index);
    expect(fwd.sort()).toEqual([...Array(B).keys()]);
    expect(bwd.sort()).toEqual([...Array(B).keys()]);
    // forward and backward of a call pair by their path without directions
    for (let k = 0; k < B; k++) {
      const f = blocks.find(c => c.dir === 'fwd' && c.index === k);
      const b = blocks.find(c => c.dir === 'bwd' && c.index === k);
      expect(f?.pair).toBe(b?.pair);
      expect(f?.label).toBe(`block ${k} · forward`);
      expect(b?.label).toBe(`block ${k} · backward`);
    }
    // inside a block: its calls; the index shows only where a name repeats among siblings
    const b1 = blocks.find(c => c.dir === 'fwd' && c.index === 1)!;
    expect(
      b1.children.map(c => tree.clusters[c].label.split(' · ')[0]).sort()
    ).toEqual(['attention', 'layernorm 0', 'layernorm 1', 'mlp']);
    // JAX's own scopes (jit(_where), an einsum spec) are no boxes: their ops are the call's
    expect(tree.clusters.some(c => /_where|->/.test(c.label))).toBe(false);
    // the user's own named scope stays, without an index
    const attn = tree.clusters.find(c => c.name === 'heads');
    expect(attn?.kind).toBe('scope');
    expect(attn?.label).toBe('heads · forward');
  });

  it('changing the loss line renames no other group', () => {
    const names = (g: HloGraph): string[] =>
      buildClusters(indexGraph(g))
        .clusters.map(c => `${c.label}`)
        .sort();
    const a = names(gradientGraph(3));
    const b = names(gradientGraph(3, { lossOps: 4 }));
    expect(b).toEqual(a);
  });

  it('shows the 24 forward and 24 backward blocks folded at first, within the budget', () => {
    const graph = gradientGraph(24);
    const payload = {
      graphs: { [graph.computation]: graph }
    } as unknown as UnpackedHloPayload;
    const m = new GraphModel(payload, graph.computation);
    expect(m.visibleCount).toBeLessThanOrEqual(BOX_BUDGET);
    const shown = m.vg.items
      .filter(it => it.kind === 'cluster')
      .map(it => m.tree.clusters[it.ref])
      .filter(c => c.name === 'block');
    expect(shown.filter(c => c.dir === 'fwd').length).toBe(24);
    expect(shown.filter(c => c.dir === 'bwd').length).toBe(24);
    // one level more opens the blocks (within the level budget), never every op
    expect(m.openLevel()).toBe(true);
    expect(m.visibleCount).toBeGreaterThan(48);
    expect(m.visibleCount).toBeLessThan(m.g.nodes.length);
    expect(
      m.vg.items.some(
        it =>
          it.kind === 'cluster' && m.tree.clusters[it.ref].name === 'attention'
      )
    ).toBe(true);
  });

  it('bundles edges: one per pair of boxes, groups as counts, implied ones left out', () => {
    const graph = gradientGraph(24);
    const payload = {
      graphs: { [graph.computation]: graph }
    } as unknown as UnpackedHloPayload;
    const m = new GraphModel(payload, graph.computation);
    const vg = m.vg;
    const pairs = new Set<string>();
    for (let e = 0; e < vg.src.length; e++) {
      const key = [vg.src[e], vg.dst[e]].sort((x, y) => x - y).join('-');
      expect(pairs.has(key)).toBe(false);
      pairs.add(key);
    }
    const label = (k: number): string =>
      vg.items[k].kind === 'cluster'
        ? m.tree.clusters[vg.items[k].ref].label
        : m.g.nodes[vg.items[k].ref].id;
    const drawn = new Set(
      Array.from(vg.src, (s, e) => `${label(s)} -> ${label(vg.dst[e])}`)
    );
    // no edge out of the folded parameter group; each block counts what it reads
    expect([...drawn].some(d => d.startsWith('parameters'))).toBe(false);
    const b2 = vg.items.findIndex(
      it =>
        it.kind === 'cluster' &&
        m.tree.clusters[it.ref].label === 'block 2 · forward'
    );
    expect(vg.inputs[b2]).toBe(2);
    // the ladder: forward chain, each forward to its backward, backward chain
    expect(drawn.has('block 2 · forward -> block 3 · forward')).toBe(true);
    expect(drawn.has('block 2 · forward -> block 2 · backward')).toBe(true);
    expect(drawn.has('block 3 · backward -> block 2 · backward')).toBe(true);
    // the backward of block 5 also feeds block 0's backward (a few small values): implied
    // by the chain 5 -> 4 -> ... -> 0, which carries more
    expect(drawn.has('block 5 · backward -> block 0 · backward')).toBe(false);
    expect(vg.implied).toBeGreaterThan(0);
    // data flowing both ways between two boxes is still one edge
    const both = indexGraph({
      computation: 'm',
      nodes: [
        hloNode('a1', { op_name: 'jit(f)/a#0/x' }),
        hloNode('b1', { op_name: 'jit(f)/b#0/x' }),
        hloNode('a2', { op_name: 'jit(f)/a#0/y' })
      ],
      edges: edges([
        ['a1', 'b1'],
        ['b1', 'a2']
      ])
    });
    const t = buildClusters(both);
    const v2 = visibleGraph(both, t, new Set());
    expect(v2.src.length).toBe(1);
    expect(v2.both[0]).toBe(1);
    expect(v2.count[0]).toBe(2);
  });

  it('names a loop body by the user function that made it, else by XLA', () => {
    const payload = {
      graphs: {
        'main.1': {
          computation: 'main.1',
          nodes: [
            hloNode('while.3', {
              kind: 'control',
              opcode: 'while',
              called: ['region_1.2', 'region_0.1']
            })
          ],
          edges: []
        },
        'region_0.1': {
          computation: 'region_0.1',
          nodes: [],
          edges: [],
          origin: {
            name: 'step',
            source: { file: '<cell 4>', line: 7, function: 'rnn' }
          }
        },
        'region_1.2': { computation: 'region_1.2', nodes: [], edges: [] }
      }
    } as unknown as UnpackedHloPayload;
    const titles = graphTitles(payload, {
      '<cell 4>': { number: 4 }
    } as never);
    expect(titles.get('region_0.1')).toBe('step · loop body, cell [4] line 7');
    expect(titles.get('region_1.2')).toBe('region_1.2');
  });
});
