import { describe, expect, it } from 'vitest';
import { routeReason } from './route-reason.js';

describe('routeReason', () => {
  it('names why the serving model serves', () => {
    expect(routeReason(undefined, 'big', 'big', 'big')).toBe('requested');
    expect(routeReason({ servedModel: 'big', pinnedModel: null }, 'big', 'big', 'big')).toBe('requested');
    expect(routeReason({ servedModel: 'small', pinnedModel: null }, 'big', 'small', 'small')).toBe('routed');
    expect(routeReason({ servedModel: 'big', pinnedModel: 'tiny' }, 'big', 'tiny', 'tiny')).toBe('pinned');
    // The route's model cannot take an image: the requested one serves.
    expect(routeReason({ servedModel: 'small', pinnedModel: null }, 'big', 'small', 'big')).toBe('content');
    // The route names a model with no engine here.
    expect(routeReason({ servedModel: 'gone', pinnedModel: null }, 'big', 'big', 'big')).toBe('no_engine');
  });
});
