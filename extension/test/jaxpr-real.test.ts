// @vitest-environment jsdom
/**
 * A real JAX 0.10 program (workbench.jaxpr payload, version 3) with what plain examples
 * lack: one jitted function called twice (JAX shares its jaxpr, so both bodies carry the
 * same variable names), custom_jvp / custom_vjp calls (params whose text has newlines),
 * a while loop with integer literals, and debug.print (an equation with no results).
 * JAX printed it as (abridged):
 *
 *     e:f32[4] = jit[name=inner jaxpr=inner] d
 *     g:f32[4] = jit[name=inner jaxpr=inner] f
 *     i:i32[] j:f32[4] = while[body_nconsts=0 cond_nconsts=0] 0:i32[] h
 *       (cond: q:bool[] = lt o 10:i32[])
 *     debug_print[fmt=z {} ...] s
 *     t:f32[4] = custom_jvp_call[name=cj ... jvp=<lambda> symbolic_zeros=False] j
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import type { RenderContext } from '../src/common/featureView';
import { buildDefUse, varKey } from '../src/jaxpr/defuse';
import { flatten, rowText, scopeOf } from '../src/jaxpr/rows';
import type { JaxprPayload } from '../src/jaxpr/types';
import { jaxprView } from '../src/jaxpr/view';
import { HUB } from '../src/sourcelines/hub';
import { syntheticPayload } from './jaxpr-synthetic';

const p = JSON.parse(
  readFileSync(join(__dirname, 'fixtures/jaxpr-shared-custom.json'), 'utf8')
) as JaxprPayload;
const flat = flatten(p.jaxpr!, p.avals);
const texts = flat.rows.map(r => rowText(flat, r));

describe('a real program printed as JAX prints it', () => {
  it('keeps every row on one line', () => {
    for (const t of texts) {
      expect(t).not.toMatch(/[\n\r]/);
    }
    const jvp = texts.find(t => t.includes('custom_jvp_call'))!;
    expect(jvp).toMatch(/symbolic_zeros=False\] \w+$/);
  });

  it('prints literals as values, not Python reprs', () => {
    for (const t of texts) {
      expect(t).not.toMatch(/Typed(Int|Float|Bool|Complex)\(/);
    }
    expect(texts.find(t => t.includes('= while['))).toMatch(
      /\] 0:i32\[\] \w+$/
    );
    expect(texts.find(t => t.includes(' = lt '))).toMatch(/ 10:i32\[\]$/);
  });

  it('prints an equation without results without "="', () => {
    const dbg = texts.find(t => t.includes('debug_print'))!;
    expect(dbg.startsWith('debug_print[')).toBe(true);
  });
});

describe('def/use across nested scopes', () => {
  // the two jit equations share a jaxpr: the same names in two different scopes
  const opens = flat.rows
    .map((r, i) => i)
    .filter(
      i =>
        flat.rows[i].kind === 'open' &&
        flat.rows[i].depth === 1 &&
        flat.rows[flat.rows[i].parent].kind === 'open' &&
        texts[i].startsWith('jaxpr=')
    );
  const [first, second] = opens.filter(i => texts[i] === texts[opens[0]]);

  it("keeps a shared body's variables apart", () => {
    expect(second).toBeGreaterThan(first);
    const name = flat.rows[second].jaxpr!.invars[0][0];
    expect(flat.rows[first].jaxpr!.invars[0][0]).toBe(name); // same name, different variable
    const du = buildDefUse(flat);
    const inSecond = du.get(varKey(scopeOf(flat, second), name))!;
    expect(inSecond.defs).toEqual([second]);
    for (const r of inSecond.uses) {
      expect(r > second && r < flat.rows[second].end).toBe(true);
    }
    const inFirst = du.get(varKey(scopeOf(flat, first), name))!;
    expect(inFirst.defs).toEqual([first]);
    for (const r of inFirst.uses) {
      expect(r > first && r < flat.rows[first].end).toBe(true);
    }
  });

  it("highlights only the clicked variable's own scope in the view", () => {
    const host = document.createElement('div');
    document.body.appendChild(host);
    const view = jaxprView();
    const ctx: RenderContext = {
      mimeType: 'application/vnd.jax-workbench.jaxpr+json',
      bundle: {},
      cells: {},
      outputId: 'out-shared',
      interactive: () => undefined
    };
    view.render(host, p as never, ctx);
    const name = flat.rows[second].jaxpr!.invars[0][0];
    const rowNode = (r: number): HTMLElement =>
      host.querySelector<HTMLElement>(`.jwb-jaxpr-row[data-row="${r}"]`)!;
    // click the variable in the second body's first equation
    const span = rowNode(second + 1).querySelector<HTMLElement>(
      `[data-v="${name}"]`
    )!;
    span.click();
    expect(rowNode(second + 1).classList.contains('jwb-jaxpr-varrow')).toBe(
      true
    );
    expect(rowNode(second).classList.contains('jwb-jaxpr-varrow')).toBe(true);
    expect(rowNode(first).classList.contains('jwb-jaxpr-varrow')).toBe(false);
    expect(rowNode(first + 1).classList.contains('jwb-jaxpr-varrow')).toBe(
      false
    );
    expect(rowNode(first + 1).querySelector('.jwb-jaxpr-vhl')).toBeNull();
    expect(rowNode(second + 1).querySelector('.jwb-jaxpr-vhl')).not.toBeNull();
    view.dispose!();
    host.remove();
  });
});

describe('an output taken away', () => {
  const ctx = (id: string): RenderContext => ({
    mimeType: 'application/vnd.jax-workbench.jaxpr+json',
    bundle: {},
    cells: {},
    outputId: id,
    interactive: () => undefined
  });

  it('withdraws the line selection it published, so the editor keeps no selected line', () => {
    const host = document.createElement('div');
    document.body.appendChild(host);
    const view = jaxprView();
    view.render(host, syntheticPayload(400, 4, 8) as never, ctx('out-gone'));
    host
      .querySelector<HTMLElement>('.jwb-jaxpr-row[data-eqn] .jwb-jaxpr-src')!
      .click();
    expect(HUB.selection).toMatchObject({
      cell: '#8',
      origin: 'jaxpr',
      reveal: true
    });
    view.dispose!(); // outputs cleared
    expect(HUB.selection).toBeNull();
    host.remove();
  });

  it('leaves a selection that others published alone', () => {
    const host = document.createElement('div');
    const view = jaxprView();
    view.render(host, syntheticPayload(400, 4, 8) as never, ctx('out-gone-2'));
    const sel = { cell: '#8', lines: [30], origin: 'editor', reveal: true };
    HUB.select(sel);
    view.dispose!();
    expect(HUB.selection).toBe(sel);
    HUB.select(null);
  });
});

describe('constants', () => {
  it('separates constvars from inputs as JAX does ("lambda a:f32[4]; b:f32[4].")', () => {
    const avals = [
      {
        text: 'f32[4]',
        shape: [4],
        dtype: 'float32',
        weak_type: false,
        sharding: null
      }
    ];
    const j = {
      constvars: [['a', 0]],
      invars: [['b', 0]],
      outvars: [['c', 0]],
      consts: ['ndarray float32[4]'],
      eqns: [
        {
          primitive: 'add',
          params: {},
          invars: [
            ['b', 0],
            ['a', 0]
          ],
          outvars: [['c', 0]],
          source: null,
          name_stack: ''
        }
      ]
    };
    const f = flatten(j as never, avals);
    expect(rowText(f, f.rows[0])).toBe('{ lambda a:f32[4]; b:f32[4]. let');
  });
});
