// @vitest-environment jsdom
/**
 * The standalone runtime (src/standalone.ts) without JupyterLab: an output's `text/html`
 * element with its data is mounted into a shadow root, drawn by the same view the extension
 * uses, its static summary hidden; user strings end up as text; mounting twice draws once.
 * (In real browsers, with the bundle the kernel embeds: tests/chromium/test_standalone_browser.py.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Blob as NodeBlob } from 'node:buffer';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { mount } from '../src/standalone';

const SHARDING = 'application/vnd.jax-workbench.sharding+json';
const XSS = '<img src=x onerror="window.__xss=1">';

function outputElement(data: Record<string, unknown>): HTMLElement {
  const box = document.createElement('div');
  box.className = 'jwb-out';
  const summary = document.createElement('div');
  summary.className = 'jwb-static';
  summary.textContent = 'summary';
  box.appendChild(summary);
  const script = document.createElement('script');
  script.type = 'application/vnd.jax-workbench.data';
  script.className = 'jwb-data';
  script.textContent = gzipSync(Buffer.from(JSON.stringify(data))).toString(
    'base64'
  );
  box.appendChild(script);
  document.body.appendChild(box);
  return box;
}

describe('standalone mount', () => {
  // jsdom's Blob has no stream(): Node's, for DecompressionStream, while these tests run
  const jsdomBlob = globalThis.Blob;
  beforeAll(() => {
    (globalThis as any).Blob = NodeBlob;
    // jsdom has no canvas: getContext returns null (the drawing is skipped)
    vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockReturnValue(null);
  });
  afterAll(() => {
    globalThis.Blob = jsdomBlob;
    vi.restoreAllMocks();
  });

  it('draws the payload in a shadow root with the extension view, as text', async () => {
    const payload = JSON.parse(
      readFileSync(join(__dirname, 'fixtures', 'sharding-tree.json'), 'utf8')
    );
    payload.layouts[0].path = XSS;
    const box = outputElement({ [SHARDING]: payload, 'text/plain': 'x' });
    await mount(box);
    const host = box.querySelector('.jwb-sa-host')!;
    const node = host.shadowRoot!.querySelector('.jwb-ext.jwb-ext-sharding')!;
    expect(node.getAttribute('data-jwb-ready')).toBe('1');
    expect(node.textContent).toContain(XSS);
    expect(node.querySelectorAll('img').length).toBe(0);
    expect((window as any).__xss).toBeUndefined();
    expect(box.querySelector<HTMLElement>('.jwb-static')!.style.display).toBe(
      'none'
    );
    // without a JupyterLab theme on the page, the light defaults apply
    expect(
      host
        .shadowRoot!.querySelector('.jwb-sa-root')!
        .getAttribute('data-jwb-theme')
    ).toBe('light');
    await mount(box);
    expect(box.querySelectorAll('.jwb-sa-host').length).toBe(1);
    box.remove();
  });

  it('says why an unknown kind is not drawn, with the text', async () => {
    const box = outputElement({
      'application/vnd.jax-workbench.nosuchkind+json': {
        version: 1,
        kind: 'nosuchkind'
      },
      'text/plain': 'plain text'
    });
    await mount(box);
    const node = box
      .querySelector('.jwb-sa-host')!
      .shadowRoot!.querySelector('.jwb-ext')!;
    expect(node.getAttribute('data-jwb-ready')).toBe('error');
    expect(node.textContent).toContain('plain text');
    box.remove();
  });
});
