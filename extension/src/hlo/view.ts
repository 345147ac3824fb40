/**
 * The HLO feature's view factory: the interactive fusion graph (output.ts) with its layout
 * worker's bundled source (scripts/bundle-workers.mjs: layout.worker.ts ->
 * generated/layout.worker-source.ts), started from a Blob URL.
 */

import type { FeatureViewFactory } from '../common/featureView';
import { WORKER_SOURCE } from '../generated/layout.worker-source';
import { HloView } from './output';

export const hloView: FeatureViewFactory = () => new HloView(WORKER_SOURCE);
