// @vitest-environment jsdom
/**
 * The DOM half of revealing a row (src/jaxpr/reveal.ts) in a jaxpr view, with the layout
 * jsdom lacks stubbed in: a notebook scroller showing [90, 700] of the window, the view's
 * list starting 20 pixels below that, the editor's cursor line on screen above it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { Payload } from '../src/common/payload';
import type { RenderContext } from '../src/common/featureView';
import { jaxprView } from '../src/jaxpr/view';
import { HUB, type LineSelection } from '../src/sourcelines/hub';
import { syntheticPayload } from './jaxpr-synthetic';

const NB = { top: 90, bottom: 700 };
const LIST_TOP = NB.bottom + 20; // the list's top, the notebook not scrolled
const CURSOR_TOP = 400;

const proto = HTMLElement.prototype;
// what the stubs shadow (jsdom keeps most of these on Element.prototype): put back after
const saved = [
  'getBoundingClientRect',
  'clientHeight',
  'scrollHeight',
  'scrollTop'
].map(k => [k, Object.getOwnPropertyDescriptor(proto, k)] as const);
const scrolls = new WeakMap<Element, number>();
let notebook: HTMLElement;

function rect(top: number, height: number): DOMRect {
  return {
    top,
    bottom: top + height,
    height,
    left: 0,
    right: 800,
    width: 800,
    x: 0,
    y: top,
    toJSON: () => ({})
  } as DOMRect;
}

beforeEach(() => {
  const moved = (): number => scrolls.get(notebook) ?? 0;
  Object.defineProperty(proto, 'scrollTop', {
    configurable: true,
    get(this: HTMLElement) {
      return scrolls.get(this) ?? 0;
    },
    set(this: HTMLElement, v: number) {
      const max = Math.max(0, this.scrollHeight - this.clientHeight);
      scrolls.set(this, Math.max(0, Math.min(max, v)));
    }
  });
  Object.defineProperty(proto, 'clientHeight', {
    configurable: true,
    get(this: HTMLElement) {
      if (this === notebook) {
        return NB.bottom - NB.top;
      }
      return this.classList.contains('jwb-jaxpr-list') ? 540 : 0;
    }
  });
  Object.defineProperty(proto, 'scrollHeight', {
    configurable: true,
    get(this: HTMLElement) {
      if (this === notebook) {
        return 5000;
      }
      return this.classList.contains('jwb-jaxpr-list') ? 12000 * 18 : 0;
    }
  });
  Object.defineProperty(proto, 'getBoundingClientRect', {
    configurable: true,
    value(this: HTMLElement) {
      if (this === notebook) {
        return rect(NB.top, NB.bottom - NB.top);
      }
      if (this.classList.contains('jwb-jaxpr-list')) {
        return rect(LIST_TOP - moved(), 540);
      }
      if (this.classList.contains('cm-activeLine')) {
        return rect(CURSOR_TOP - moved(), 17);
      }
      return rect(0, 0);
    }
  });
  notebook = document.createElement('div');
  notebook.style.overflowY = 'auto';
  document.body.appendChild(notebook);
});

afterEach(() => {
  HUB.select(null);
  notebook.remove();
  for (const [k, d] of saved) {
    if (d) {
      Object.defineProperty(proto, k, d);
    } else {
      delete (proto as unknown as Record<string, unknown>)[k];
    }
  }
});

function context(id: string): RenderContext {
  return {
    mimeType: 'application/vnd.jax-workbench.jaxpr+json',
    bundle: {},
    cells: {},
    outputId: id,
    interactive: () => undefined
  };
}

/** An editor in the notebook, focused, its cursor on a line above the list. */
function focusedEditor(): void {
  const editor = document.createElement('div');
  editor.className = 'cm-editor';
  const content = document.createElement('div');
  content.className = 'cm-content';
  content.tabIndex = 0;
  const line = document.createElement('div');
  line.className = 'cm-line cm-activeLine';
  line.textContent = 'x = jnp.tanh(x)';
  content.appendChild(line);
  editor.appendChild(content);
  notebook.appendChild(editor);
  content.focus();
  expect(document.activeElement).toBe(content);
}

/** The offset in its list of the first lit row (the list draws each row at `top: v * h`). */
function firstLit(host: HTMLElement): number {
  const tops = [
    ...host.querySelectorAll<HTMLElement>('.jwb-jaxpr-row.jwb-linked')
  ].map(r => parseFloat(r.style.top));
  expect(tops.length).toBeGreaterThan(0);
  return Math.min(...tops);
}

function show(): { host: HTMLElement; dispose: () => void } {
  const host = document.createElement('div');
  notebook.appendChild(host);
  const view = jaxprView();
  view.render(
    host,
    syntheticPayload(12000, 24, 3) as unknown as Payload,
    context('out')
  );
  return { host, dispose: () => view.dispose!() };
}

const SEL: LineSelection = {
  cell: '#3',
  lines: [30],
  origin: 'editor',
  reveal: true
};

describe('revealing an editor line in a jaxpr list below the fold (DOM)', () => {
  it('scrolls the notebook, keeping the cursor line on screen and the focus', () => {
    focusedEditor();
    const { host, dispose } = show();
    const focused = document.activeElement;
    HUB.select({ ...SEL });
    const list = host.querySelector<HTMLElement>('.jwb-jaxpr-list')!;
    const d = notebook.scrollTop;
    expect(d).toBeGreaterThan(0);
    expect(CURSOR_TOP - d).toBeGreaterThanOrEqual(NB.top);
    // the first lit row is on screen: inside the notebook's view and inside the list's
    const row = LIST_TOP - d + firstLit(host) - list.scrollTop;
    expect(row).toBeGreaterThanOrEqual(Math.max(NB.top, LIST_TOP - d));
    expect(row + 18).toBeLessThanOrEqual(NB.bottom);
    expect(document.activeElement).toBe(focused);
    dispose();
  });

  it('does not move the notebook for a selection made before the output was shown', () => {
    focusedEditor();
    HUB.select({ ...SEL }); // no output yet: a re-run or a late render follows
    const { host, dispose } = show();
    expect(
      host.querySelector('.jwb-jaxpr')!.getAttribute('data-highlighted')
    ).not.toBe('0');
    expect(notebook.scrollTop).toBe(0);
    // its list shows the row, for when the user scrolls down to it
    const list = host.querySelector<HTMLElement>('.jwb-jaxpr-list')!;
    const at = firstLit(host) - list.scrollTop;
    expect(at).toBeGreaterThanOrEqual(0);
    expect(at + 18).toBeLessThanOrEqual(540);
    dispose();
  });
});
