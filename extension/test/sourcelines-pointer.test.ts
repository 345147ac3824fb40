// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';

import { pointerMoved, resetPointer } from '../src/sourcelines/pointer';

describe('pointer', () => {
  it('tells a moving pointer from a page scrolling under a still one', () => {
    resetPointer();
    const target = document.createElement('div');
    document.body.appendChild(target);
    const seen: boolean[] = [];
    target.addEventListener('mousemove', ev => seen.push(pointerMoved(ev)));
    target.addEventListener('mouseover', ev => seen.push(pointerMoved(ev)));
    const move = (type: string, x: number, y: number): void => {
      target.dispatchEvent(
        new MouseEvent(type, { clientX: x, clientY: y, bubbles: true })
      );
    };
    move('mousemove', 10, 10); // first event: moved
    move('mousemove', 12, 10); // moved
    move('mousemove', 12, 10); // same place: the page scrolled under it
    move('mouseover', 12, 10); // a row slid under the still pointer
    move('mouseover', 30, 40); // a real move onto another row
    expect(seen).toEqual([true, true, false, false, true]);
  });
});
