/**
 * Tiny DOM builders shared by every view.  Payload strings (paths,
 * function names, reasons: user code) only ever go through `textContent`.
 */

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string | null
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
  }
  if (text !== undefined && text !== null) {
    node.textContent = text;
  }
  return node;
}

export function add<T extends Node>(parent: Node, child: T): T {
  parent.appendChild(child);
  return child;
}

/**
 * A `<table class=cls>` whose `<thead>` holds one row of `head` cells, and its empty
 * `<tbody>` for the caller's rows.
 */
export function headedTable(
  cls: string,
  head: readonly string[]
): [HTMLTableElement, HTMLTableSectionElement] {
  const table = el('table', cls);
  const tr = add(add(table, el('thead')), el('tr'));
  for (const h of head) {
    add(tr, el('th', undefined, h));
  }
  return [table, add(table, el('tbody'))];
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {}
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    node.setAttribute(k, String(v));
  }
  return node;
}

/** Read a JupyterLab CSS variable as the host sees it (for canvas drawing). */
export function cssVar(host: Element, name: string, fallback = ''): string {
  const v = getComputedStyle(host).getPropertyValue(name).trim();
  return v || fallback;
}

/** Call `fn` whenever JupyterLab's theme changes (light <-> dark); returns the disconnect. */
export function onThemeChange(fn: () => void): () => void {
  if (
    typeof MutationObserver === 'undefined' ||
    typeof document === 'undefined'
  ) {
    return () => undefined;
  }
  const obs = new MutationObserver(() => fn());
  obs.observe(document.body, {
    attributes: true,
    attributeFilter: ['data-jp-theme-light', 'data-jp-theme-name']
  });
  return () => obs.disconnect();
}
