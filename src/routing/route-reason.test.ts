import { describe, expect, it } from 'vitest';
import type { RouteSplit } from '../store/routing-store.js';
import { drawRoute, routeReason } from './route-reason.js';

function split(shares: Array<[string, number]>): RouteSplit {
  return { shares: shares.map(([model, share]) => ({ model, share, diffLower: -0.01, samples: 100 })), requestedLower: 0.8, qualityBar: 0.95, confidence: 0.95, contractVersion: 0, at: 0 };
}

const plain = { servedModel: 'big', pinnedModel: null, split: null };

describe('drawRoute', () => {
  it('sends each call of a split route to a share at random, the rest to the serving model', () => {
    const route = { ...plain, split: split([['small', 0.3], ['tiny', 0.2]]) };
    expect(drawRoute(route, 'big', () => 0.1)).toEqual({ model: 'small', share: 0.3 });
    expect(drawRoute(route, 'big', () => 0.35)).toEqual({ model: 'tiny', share: 0.2 });
    expect(drawRoute(route, 'big', () => 0.5)).toEqual({ model: 'big', share: null });
    let seed = 1;
    const random = () => ((seed = (seed * 16_807) % 2_147_483_647) - 1) / 2_147_483_646;
    const counts = new Map<string, number>();
    for (let call = 0; call < 20_000; call += 1) {
      const model = drawRoute(route, 'big', random).model;
      counts.set(model, (counts.get(model) ?? 0) + 1);
    }
    expect((counts.get('small') ?? 0) / 20_000).toBeCloseTo(0.3, 1);
    expect((counts.get('tiny') ?? 0) / 20_000).toBeCloseTo(0.2, 1);
  });

  it('follows a pin whatever the shares, and the requested model without a route', () => {
    expect(drawRoute({ ...plain, pinnedModel: 'pin', split: split([['small', 0.9]]) }, 'big', () => 0)).toEqual({ model: 'pin', share: null });
    expect(drawRoute(undefined, 'big', () => 0)).toEqual({ model: 'big', share: null });
  });
});

describe('routeReason', () => {
  const draw = (model: string, share: number | null = null) => ({ model, share });
  it('names why the serving model serves', () => {
    expect(routeReason(undefined, draw('big'), 'big', 'big', 'big')).toBe('requested');
    expect(routeReason({ pinnedModel: null }, draw('big'), 'big', 'big', 'big')).toBe('requested');
    expect(routeReason({ pinnedModel: null }, draw('small'), 'big', 'small', 'small')).toBe('routed');
    expect(routeReason({ pinnedModel: null }, draw('small', 0.3), 'big', 'small', 'small')).toBe('split');
    expect(routeReason({ pinnedModel: 'tiny' }, draw('tiny'), 'big', 'tiny', 'tiny')).toBe('pinned');
    // The route's model cannot take an image: the requested one serves.
    expect(routeReason({ pinnedModel: null }, draw('small'), 'big', 'small', 'big')).toBe('content');
    // The route names a model with no engine here.
    expect(routeReason({ pinnedModel: null }, draw('gone'), 'big', 'big', 'big')).toBe('no_engine');
  });
});
