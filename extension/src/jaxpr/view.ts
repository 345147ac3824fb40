/** The jaxpr feature's views (see jaxprView.ts and compareView.ts). */

import type { FeatureViewFactory } from '../common/featureView';
import { createCompareView } from './compareView';
import { createJaxprView } from './jaxprView';

export const jaxprView: FeatureViewFactory = createJaxprView;
export const jaxprCompareView: FeatureViewFactory = createCompareView;
