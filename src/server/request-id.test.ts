import { describe, expect, it } from 'vitest';
import { createRequestIds } from './request-id.js';

describe('request ids', () => {
  it('are distinct across draws of random hex, shaped req_ + 9 base-36 time characters + 16 hex, and sort by time', () => {
    const newRequestId = createRequestIds();
    const ids = Array.from({ length: 1_000 }, () => newRequestId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-z]{9}[0-9a-f]{16}$/);
    const times = ids.map((id) => id.slice(4, 13));
    expect([...times].sort()).toEqual(times);
    expect(Number.parseInt(times[0] as string, 36)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('differ between generators (processes)', () => {
    const first = createRequestIds();
    const second = createRequestIds();
    expect(first().slice(13)).not.toBe(second().slice(13));
  });
});
