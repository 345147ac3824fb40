/**
 * Whether a mouse event comes from the pointer moving, or from the page scrolling under a
 * still pointer (browsers send mousemove/mouseover then, at the same coordinates).  After a
 * click scrolls the notebook to a line, the pointer is suddenly over some other linked line
 * or row; hover publications from such events would replace the clicked selection.
 */

let last: { x: number; y: number } | null = null;
let prev: { x: number; y: number } | null = null;
let installed = false;

function record(ev: MouseEvent): void {
  prev = last;
  last = { x: ev.clientX, y: ev.clientY };
}

function install(): void {
  if (installed || typeof window === 'undefined') {
    return;
  }
  installed = true;
  window.addEventListener('mousemove', record, {
    capture: true,
    passive: true
  });
}

/** False for a mousemove/mouseover at the coordinates of the mousemove before it. */
export function pointerMoved(ev: MouseEvent): boolean {
  install();
  const before = ev.type === 'mousemove' ? prev : last;
  return !before || before.x !== ev.clientX || before.y !== ev.clientY;
}

/** For tests: forget what was seen. */
export function resetPointer(): void {
  last = prev = null;
}
