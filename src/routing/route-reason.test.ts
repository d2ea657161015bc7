import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { RouteSplit, StoredCallPolicy } from '../store/routing-store.js';
import { callFeatures, type CallRequest } from './call-features.js';
import { lossProbability, routesToCandidate } from './call-policy.js';
import { drawRoute, routeReason } from './route-reason.js';

// callFeatures as it is, counted.
vi.mock('./call-features.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./call-features.js')>();
  return { ...actual, callFeatures: vi.fn(actual.callFeatures) };
});
beforeEach(() => {
  vi.mocked(callFeatures).mockClear();
});

function split(shares: Array<[string, number]>): RouteSplit {
  return {
    shares: shares.map(([model, share]) => ({ model, share, diffLower: -0.01, samples: 100 })),
    requestedLower: 0.8,
    qualityBar: 0.95,
    confidence: 0.95,
    contractVersion: 0,
    at: 0,
  };
}

const plain = { servedModel: 'big', pinnedModel: null, split: null };

const ask = (content: string): CallRequest => ({
  messages: [
    { role: 'system', content: 'You answer questions.' },
    { role: 'user', content },
  ],
});

/**
 * A policy that picks the calls whose last user message says "easy": that
 * word's feature weighs -20 on the logit of P(loss), the bias 2 puts every
 * other call at P(loss) ≈ 0.88, above the threshold 0.01 × the request's size (at most 0.4 here).
 */
function easyPolicy(): StoredCallPolicy {
  const easy = callFeatures({ messages: [{ role: 'user', content: 'easy' }] });
  const dimension = easy.dimension;
  const weights = new Array<number>(dimension).fill(0);
  // The first feature is the word (the length, turn and format features follow it).
  weights[easy.indices[0]!] = -20;
  return { epoch: 2, dimension, weights, bias: 2, threshold: 0.01, routedShare: 0.4 };
}

/** A request that fails the test if drawRoute reads it. */
const untouchable = (): CallRequest =>
  ({
    get messages(): never {
      throw new Error('the request was read');
    },
  }) as unknown as CallRequest;

describe('drawRoute', () => {
  it('sends each call of a split route to a share at random, the rest to the serving model', () => {
    const route = {
      ...plain,
      split: split([
        ['small', 0.3],
        ['tiny', 0.2],
      ]),
    };
    expect(drawRoute(route, 'big', () => 0.1)).toEqual({ model: 'small', share: 0.3, policy: false });
    expect(drawRoute(route, 'big', () => 0.35)).toEqual({ model: 'tiny', share: 0.2, policy: false });
    expect(drawRoute(route, 'big', () => 0.5)).toEqual({ model: 'big', share: null, policy: false });
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
    expect(drawRoute({ ...plain, pinnedModel: 'pin', split: split([['small', 0.9]]) }, 'big', () => 0)).toEqual({
      model: 'pin',
      share: null,
      policy: false,
    });
    expect(drawRoute(undefined, 'big', () => 0)).toEqual({ model: 'big', share: null, policy: false });
  });

  it('sends a share of the calls a policy picks to its model, and keeps every call it does not pick on the serving model', () => {
    const policy = easyPolicy();
    expect(routesToCandidate(policy, callFeatures(ask('an easy one: 2 + 2?')))).toBe(true);
    expect(lossProbability(policy, callFeatures(ask('a hard one: prove it')))).toBeGreaterThan(0.5);
    const route = {
      ...plain,
      split: { ...split([['small', 0.6]]), shares: [{ model: 'small', share: 0.6, diffLower: -0.01, samples: 100, policy }] },
    };

    expect(drawRoute(route, 'big', () => 0.59, ask('an easy one: 2 + 2?'))).toEqual({ model: 'small', share: 0.6, policy: true });
    expect(drawRoute(route, 'big', () => 0.61, ask('an easy one: 2 + 2?'))).toEqual({ model: 'big', share: null, policy: false });
    for (const draw of [0, 0.3, 0.99])
      expect(drawRoute(route, 'big', () => draw, ask('a hard one: prove it'))).toEqual({ model: 'big', share: null, policy: false });
    // Without the request no call can be judged: none is picked.
    expect(drawRoute(route, 'big', () => 0)).toEqual({ model: 'big', share: null, policy: false });
    // Nor under a policy on features of another dimension than this process computes (it would throw): it picks none.
    const other = {
      ...route,
      split: {
        ...route.split,
        shares: [{ model: 'small', share: 0.6, diffLower: -0.01, samples: 100, policy: { ...policy, dimension: 1_024 } }],
      },
    };
    expect(drawRoute(other, 'big', () => 0, ask('easy'))).toEqual({ model: 'big', share: null, policy: false });
    // The share is of the picked calls, not of all calls.
    let seed = 7;
    const random = () => ((seed = (seed * 16_807) % 2_147_483_647) - 1) / 2_147_483_646;
    let routed = 0;
    for (let call = 0; call < 10_000; call += 1) if (drawRoute(route, 'big', random, ask('easy')).model === 'small') routed += 1;
    expect(routed / 10_000).toBeCloseTo(0.6, 1);
  });

  it('reads the request at most once a call, and never on a route without a policy', () => {
    const policy = easyPolicy();
    vi.mocked(callFeatures).mockClear();
    const untouched = untouchable();
    const shares = {
      ...plain,
      split: split([
        ['small', 0.3],
        ['tiny', 0.2],
      ]),
    };
    for (const draw of [0.1, 0.35, 0.9]) expect(() => drawRoute(shares, 'big', () => draw, untouched)).not.toThrow();
    expect(() => drawRoute(plain, 'big', () => 0, untouched)).not.toThrow();
    expect(() => drawRoute(undefined, 'big', () => 0, untouched)).not.toThrow();
    expect(() =>
      drawRoute(
        {
          ...plain,
          pinnedModel: 'pin',
          split: { ...split([]), shares: [{ model: 'small', share: 0.5, diffLower: 0, samples: 1, policy }] },
        },
        'big',
        () => 0,
        untouched,
      ),
    ).not.toThrow();

    expect(callFeatures).not.toHaveBeenCalled();

    // Two policies on one split (not written today): the features are computed once.
    const twice = {
      ...plain,
      split: {
        ...split([]),
        shares: [
          { model: 'small', share: 0.5, diffLower: 0, samples: 1, policy },
          { model: 'tiny', share: 0.5, diffLower: 0, samples: 1, policy },
        ],
      },
    };
    expect(drawRoute(twice, 'big', () => 0, ask('a hard one'))).toEqual({ model: 'big', share: null, policy: false });
    expect(callFeatures).toHaveBeenCalledTimes(1);
    // A call not drawn into the policy's share is not featurised at all.
    expect(drawRoute(twice, 'big', () => 0.9, ask('easy'))).toEqual({ model: 'big', share: null, policy: false });
    expect(callFeatures).toHaveBeenCalledTimes(1);
  });

  it('draws the random shares of a split with a policy as before, in order', () => {
    const policy = easyPolicy();
    const route = {
      ...plain,
      split: {
        ...split([]),
        shares: [
          { model: 'small', share: 0.3, diffLower: 0, samples: 1 },
          { model: 'tiny', share: 0.5, diffLower: 0, samples: 1, policy },
        ],
      },
    };
    expect(drawRoute(route, 'big', () => 0.2, ask('a hard one'))).toEqual({ model: 'small', share: 0.3, policy: false });
    expect(drawRoute(route, 'big', () => 0.4, ask('a hard one'))).toEqual({ model: 'big', share: null, policy: false });
    expect(drawRoute(route, 'big', () => 0.4, ask('easy'))).toEqual({ model: 'tiny', share: 0.5, policy: true });
  });
});

describe('routeReason', () => {
  const draw = (model: string, share: number | null = null, policy = false) => ({ model, share, policy });
  it('names why the serving model serves', () => {
    expect(routeReason(undefined, draw('big'), 'big', 'big', 'big')).toBe('requested');
    expect(routeReason({ pinnedModel: null }, draw('big'), 'big', 'big', 'big')).toBe('requested');
    expect(routeReason({ pinnedModel: null }, draw('small'), 'big', 'small', 'small')).toBe('routed');
    expect(routeReason({ pinnedModel: null }, draw('small', 0.3), 'big', 'small', 'small')).toBe('split');
    expect(routeReason({ pinnedModel: null }, draw('small', 0.6, true), 'big', 'small', 'small')).toBe('policy');
    // Picked by the policy, but the model cannot take the call's content: the requested one serves.
    expect(routeReason({ pinnedModel: null }, draw('small', 0.6, true), 'big', 'small', 'big')).toBe('content');
    expect(routeReason({ pinnedModel: 'tiny' }, draw('tiny'), 'big', 'tiny', 'tiny')).toBe('pinned');
    // The route's model cannot take an image: the requested one serves.
    expect(routeReason({ pinnedModel: null }, draw('small'), 'big', 'small', 'big')).toBe('content');
    // The route names a model with no engine here.
    expect(routeReason({ pinnedModel: null }, draw('gone'), 'big', 'big', 'big')).toBe('no_engine');
  });
});
