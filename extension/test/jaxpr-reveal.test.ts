import { describe, expect, it } from 'vitest';

import {
  nearestDelta,
  planReveal,
  type RevealInput,
  type ScrollerBox
} from '../src/jaxpr/reveal';

const H = 18;
const LIST_H = 540;

/** A notebook whose view is [90, 970] of a 1000-pixel window, scrolled to `scrollTop`. */
function notebook(scrollTop = 400, max = 5000): ScrollerBox {
  return {
    top: 90,
    bottom: 970,
    scrollTop,
    maxScrollTop: max,
    holdsCursor: true
  };
}

const WINDOW: ScrollerBox = {
  top: 0,
  bottom: 1000,
  scrollTop: 0,
  maxScrollTop: 0,
  holdsCursor: true
};

/** A 900-row list whose box starts at `listTop` (client y), scrolled to `scrollTop`. */
function input(
  listTop: number,
  index: number,
  over: Partial<RevealInput> = {}
): RevealInput {
  return {
    rowHeight: H,
    index,
    list: {
      top: listTop,
      bottom: listTop + LIST_H,
      scrollTop: 0,
      maxScrollTop: 900 * H - LIST_H,
      holdsCursor: false
    },
    outer: [notebook(), WINDOW],
    cursor: { top: 400, bottom: 417 },
    mayScrollOuter: true,
    margin: 8,
    ...over
  };
}

/** Where the row's top is once `plan` is applied to `inp` (client y). */
function rowTopAfter(
  inp: RevealInput,
  plan: ReturnType<typeof planReveal>
): number {
  const st = plan.listScrollTop ?? inp.list.scrollTop;
  const moved = plan.outerDeltas.reduce((a, d) => a + d, 0);
  return inp.list.top - moved + inp.index * H - st;
}

describe('revealing a selected row', () => {
  it('moves nothing when the row is already on screen', () => {
    const inp = input(200, 3);
    const plan = planReveal(inp);
    expect(plan).toEqual({
      listScrollTop: null,
      outerDeltas: [0, 0],
      seen: true
    });
  });

  it('centres the row in the list when the whole list is on screen', () => {
    const inp = input(200, 300);
    const plan = planReveal(inp);
    expect(plan.outerDeltas).toEqual([0, 0]);
    expect(plan.listScrollTop).toBe(300 * H - LIST_H / 2 + H / 2);
    expect(plan.seen).toBe(true);
  });

  it('scrolls only the list when part of it is on screen: the row at that part', () => {
    // the list's top 110 pixels are above the notebook's bottom edge (970)
    const inp = input(860, 300);
    const plan = planReveal(inp);
    expect(plan.outerDeltas).toEqual([0, 0]);
    const top = rowTopAfter(inp, plan);
    expect(top).toBeGreaterThanOrEqual(860);
    expect(top + H).toBeLessThanOrEqual(970);
  });

  it('scrolls the notebook the least that shows a row of a list below the fold', () => {
    const inp = input(1110, 300);
    const plan = planReveal(inp);
    expect(plan.seen).toBe(true);
    const [d] = plan.outerDeltas;
    const top = rowTopAfter(inp, plan);
    // on screen, margin kept, and no further than that: the row ends at the margin
    expect(top + H).toBeCloseTo(970 - inp.margin, 6);
    // the cursor's line is still on screen
    expect(inp.cursor!.top - d).toBeGreaterThanOrEqual(90);
    // the row is near the list's top: the notebook moved less than the list's height
    expect(d).toBeLessThan(LIST_H);
  });

  it('leaves the notebook where it is when that would scroll the cursor line away', () => {
    const inp = input(1110, 300, { cursor: { top: 120, bottom: 137 } });
    const plan = planReveal(inp);
    expect(plan.outerDeltas).toEqual([0, 0]);
    expect(plan.seen).toBe(false);
    // the row waits at the list's top for the user to scroll there
    expect(rowTopAfter(inp, plan) - inp.list.top).toBeLessThanOrEqual(2 * H);
  });

  it('leaves the notebook alone for a selection that may not move it', () => {
    for (const over of [{ mayScrollOuter: false }, { cursor: null }]) {
      const plan = planReveal(input(1110, 300, over));
      expect(plan.outerDeltas).toEqual([0, 0]);
      expect(plan.seen).toBe(false);
    }
  });

  it("scrolls an output area's own scroller before the notebook, cursor outside it", () => {
    // JupyterLab's scrolled outputs: the output area [600, 900] scrolls the list inside it
    const area: ScrollerBox = {
      top: 600,
      bottom: 900,
      scrollTop: 0,
      maxScrollTop: 600,
      holdsCursor: false
    };
    const inp = input(950, 300, { outer: [area, notebook(), WINDOW] });
    const plan = planReveal(inp);
    expect(plan.seen).toBe(true);
    expect(plan.outerDeltas[0]).toBeGreaterThan(0);
    expect(plan.outerDeltas[1]).toBe(0); // the notebook (and the cursor line) did not move
    const top = rowTopAfter(inp, plan);
    expect(top).toBeGreaterThanOrEqual(600);
    expect(top + H).toBeLessThanOrEqual(900);
  });

  it('finds the nearest scroll of a box, with a margin, either way', () => {
    const box = { top: 100, bottom: 500 };
    expect(nearestDelta(200, H, box, 8)).toBe(0);
    expect(nearestDelta(600, H, box, 8)).toBe(600 + H - 492);
    expect(nearestDelta(50, H, box, 8)).toBe(50 - 108);
  });
});
