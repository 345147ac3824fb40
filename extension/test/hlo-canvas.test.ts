// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';

import { GraphCanvas } from '../src/hlo/canvas';
import { layeredLayout } from '../src/hlo/layout';
import { GraphModel } from '../src/hlo/model';
import type { Scene } from '../src/hlo/scene';
import type { HloNode, UnpackedHloPayload } from '../src/hlo/types';
import { noopContext, stubCanvas } from './hlo-fixtures';
import { chainGraph, hloNode } from './hlo-synthetic';

function node(id: string, bytesMoved: number, opName: string): HloNode {
  return hloNode(id, { bytes_moved: bytesMoved, op_name: opName });
}

describe('hlo canvas text', () => {
  it('draws every box text in --jp-ui-font-color1 (color2 is < 4.5:1 on cluster and heat-tinted boxes)', () => {
    // 20 loose ops (one far heavier: the heat-tinted top box) and a folded 70-op scope
    const nodes: HloNode[] = [];
    for (let i = 0; i < 20; i++) {
      nodes.push(node(`n${i}`, i === 19 ? 1e6 : 100 + i, `jit(f)/op${i}`));
    }
    for (let i = 0; i < 70; i++) {
      nodes.push(node(`s${i}`, 50, 'jit(f)/jit(blk)/mul'));
    }
    const payload = {
      graphs: { m: chainGraph('m', nodes) }
    } as unknown as UnpackedHloPayload;
    const model = new GraphModel(payload, 'm');
    const scene = model.scene(layeredLayout(model.layoutInput()), () => null);
    expect([...scene.kind].some(k => k === 1)).toBe(true); // a folded cluster box is drawn
    expect([...scene.heat].some(h => h >= 3)).toBe(true); // and a heat-tinted box

    const texts: Array<[string, string]> = [];
    let fill = '';
    const ctx = new Proxy({} as Record<string | symbol, unknown>, {
      get: (_t, prop) => {
        if (prop === 'fillStyle') {
          return fill;
        }
        if (prop === 'fillText') {
          return (t: string) => {
            texts.push([t, fill]);
          };
        }
        if (prop === 'measureText') {
          return () => ({ width: 10 });
        }
        return () => undefined;
      },
      set: (_t, prop, v) => {
        if (prop === 'fillStyle') {
          fill = String(v);
        }
        return true;
      }
    });
    stubCanvas(ctx, 4000, 4000);
    const box = document.createElement('div');
    box.style.setProperty('--jp-ui-font-color1', 'rgb(1, 1, 1)');
    box.style.setProperty('--jp-ui-font-color2', 'rgb(2, 2, 2)');
    document.body.appendChild(box);
    const canvas = new GraphCanvas(box, {
      click: () => undefined,
      dblclick: () => undefined,
      frameClick: () => undefined
    });
    canvas.setScene(scene);
    canvas.fit();
    expect(canvas.scale).toBeGreaterThanOrEqual(0.5); // text is drawn at this scale
    canvas.draw();
    const boxTexts = new Set([...scene.title, ...scene.sub]);
    const drawn = texts.filter(([t]) => boxTexts.has(t));
    expect(drawn.length).toBe(2 * scene.n);
    expect(drawn.filter(([, c]) => c !== 'rgb(1, 1, 1)')).toEqual([]);
    canvas.dispose();
  });

  it('fits a graph too big to show whole onto boxes, not onto an empty corner', () => {
    // everything opened: a tall graph whose top-left corner is empty (sources sit next to
    // their first users); the fit must show the topmost box
    stubCanvas(noopContext(), 600, 400);
    const f64 = (a: number[]): Float64Array => Float64Array.from(a);
    const scene: Scene = {
      n: 2,
      x: f64([3000, 100]),
      y: f64([20, 3000]),
      w: f64([200, 200]),
      h: f64([40, 40]),
      title: ['top', 'bottom'],
      sub: ['', ''],
      heat: new Uint8Array(2),
      kind: new Uint8Array(2),
      stripe: [null, null],
      flags: new Uint8Array(2),
      edgeOffsets: Int32Array.from([0, 2]),
      edgePoints: f64([3000, 40, 100, 2980]),
      edgeBox: f64([100, 40, 3000, 2980]),
      edgeWeight: f64([1]),
      edgeWidth: Uint8Array.from([1]),
      edgeBoth: new Uint8Array(1),
      edgeFaint: new Uint8Array(1),
      frames: [],
      width: 3100,
      height: 3020
    };
    const box = document.createElement('div');
    document.body.appendChild(box);
    const canvas = new GraphCanvas(box, {
      click: () => undefined,
      dblclick: () => undefined,
      frameClick: () => undefined
    });
    canvas.setScene(scene);
    canvas.fit(0.8);
    expect(canvas.scale).toBeCloseTo(0.8);
    expect(canvas.isVisible(0)).toBe(true);
    canvas.dispose();
  });
});
