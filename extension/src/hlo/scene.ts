/** What the canvas draws: laid-out boxes, edges and frames, in world coordinates. */

export const FLAG_SELECTED = 1;
export const FLAG_LINKED = 2;
export const FLAG_SEARCH = 4;

/** a folded box's title font size in world px (a node's is 12) */
export const TITLE_PX = 13;

export interface Frame {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  label: string;
  /** the open cluster it frames (its title folds it) */
  cluster: number;
  /** the other half of a forward / backward pair framed with it (-1: none) */
  partner: number;
}

export interface Scene {
  n: number;
  /** box centres and sizes */
  x: Float64Array;
  y: Float64Array;
  w: Float64Array;
  h: Float64Array;
  title: string[];
  sub: string[];
  heat: Uint8Array;
  kind: Uint8Array;
  /** source line colour (hub), null: none */
  stripe: Array<string | null>;
  flags: Uint8Array;
  edgeOffsets: Int32Array;
  edgePoints: Float64Array;
  /** edge e's bounding box: [x0, y0, x1, y1] at 4e */
  edgeBox: Float64Array;
  /** bytes an edge carries (all the graph's edges it bundles) */
  edgeWeight: Float64Array;
  /** its width in screen pixels (1 to 4, by bytes) */
  edgeWidth: Uint8Array;
  /** 1: data flows both ways (an arrowhead at each end) */
  edgeBoth: Uint8Array;
  /** 1: drawn faint (an edge of a parameter/constant group) */
  edgeFaint: Uint8Array;
  frames: Frame[];
  width: number;
  height: number;
}

export function edgeBoxes(
  offsets: Int32Array,
  points: Float64Array
): Float64Array {
  const m = offsets.length - 1;
  const box = new Float64Array(4 * Math.max(0, m));
  for (let e = 0; e < m; e++) {
    let x0 = Infinity,
      y0 = Infinity,
      x1 = -Infinity,
      y1 = -Infinity;
    for (let k = offsets[e]; k < offsets[e + 1]; k++) {
      const px = points[2 * k];
      const py = points[2 * k + 1];
      if (px < x0) {
        x0 = px;
      }
      if (px > x1) {
        x1 = px;
      }
      if (py < y0) {
        y0 = py;
      }
      if (py > y1) {
        y1 = py;
      }
    }
    box[4 * e] = x0;
    box[4 * e + 1] = y0;
    box[4 * e + 2] = x1;
    box[4 * e + 3] = y1;
  }
  return box;
}

/** The item under a world point, -1: none (last drawn wins, so search from the end). */
export function hitTest(scene: Scene, wx: number, wy: number): number {
  for (let i = scene.n - 1; i >= 0; i--) {
    if (
      Math.abs(wx - scene.x[i]) <= scene.w[i] / 2 &&
      Math.abs(wy - scene.y[i]) <= scene.h[i] / 2
    ) {
      return i;
    }
  }
  return -1;
}

/** The frame whose title tab (16 px above its top edge) holds a world point, -1: none. */
export function hitFrameTab(scene: Scene, wx: number, wy: number): number {
  for (let f = scene.frames.length - 1; f >= 0; f--) {
    const fr = scene.frames[f];
    if (wx >= fr.x0 && wx <= fr.x1 && wy >= fr.y0 - 18 && wy <= fr.y0) {
      return f;
    }
  }
  return -1;
}
