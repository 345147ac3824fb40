// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import {
  forgetResolvedColors,
  lineColor,
  resolveColor
} from '../src/sourcelines/colors';

/**
 * A browser's getComputedStyle, emulated: the colour the current theme gives a probe, and
 * '' for an element outside the document (Chrome computes nothing for a detached node; a
 * notebook in full windowing mode detaches the cells scrolled out of view).
 */
let themeColor = 'rgb(1, 2, 3)';

function setTheme(name: string, light: boolean, color: string): void {
  document.body.dataset.jpThemeName = name;
  document.body.dataset.jpThemeLight = String(light);
  themeColor = color;
}

beforeEach(() => {
  forgetResolvedColors();
  setTheme('JupyterLab Light', true, 'rgb(1, 2, 3)');
  vi.spyOn(window, 'getComputedStyle').mockImplementation(
    (el: Element) =>
      ({
        color: el.isConnected ? themeColor : ''
      }) as unknown as CSSStyleDeclaration
  );
});

afterEach(() => {
  vi.restoreAllMocks();
  document.body.textContent = '';
});

describe('resolveColor', () => {
  it('resolves against the theme, not the unresolved CSS, when its host is detached', () => {
    const css = lineColor(4);
    const detached = document.createElement('div');
    expect(resolveColor(css, detached)).toBe('rgb(1, 2, 3)');
    // and a detached host never leaves the unresolved text cached for attached ones
    const attached = document.body.appendChild(document.createElement('div'));
    expect(resolveColor(css, attached)).toBe('rgb(1, 2, 3)');
  });

  it('does not cache a colour nothing could resolve', () => {
    const css = lineColor(5);
    themeColor = '';
    const host = document.body.appendChild(document.createElement('div'));
    resolveColor(css, host);
    themeColor = 'rgb(7, 8, 9)';
    expect(resolveColor(css, host)).toBe('rgb(7, 8, 9)');
  });

  it("gives the current theme's colour after a switch nobody announced (no HLO view was alive)", () => {
    const css = lineColor(6);
    const host = document.body.appendChild(document.createElement('div'));
    expect(resolveColor(css, host)).toBe('rgb(1, 2, 3)');
    setTheme('JupyterLab Dark', false, 'rgb(200, 100, 50)');
    expect(resolveColor(css, host)).toBe('rgb(200, 100, 50)');
  });
});
