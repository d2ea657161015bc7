/** The shedding decision of the slow-connection guard; the guard on real sockets is test/connection-guard.test.ts. */
import { describe, expect, it } from 'vitest';
import { whichToShed, type SlowConnection } from './slow-connections.js';

/** Slow connections named `<address>@<since>`, in the order given. */
function slow(...names: string[]): SlowConnection<string>[] {
  return names.map((name) => {
    const [address, since] = name.split('@') as [string, string];
    return { key: name, address, since: Number(since) };
  });
}

const shedKeys = (connections: SlowConnection<string>[], perAddress: number, total: number) =>
  whichToShed(connections, { perAddress, total }).map((shed) => `${shed.connection.key} (${shed.cap})`);

describe('whichToShed', () => {
  it('sheds nothing while every address is within its cap and all are within the total', () => {
    expect(shedKeys(slow('a@1', 'a@2', 'a@3', 'b@1', 'b@2', 'b@3'), 3, 6)).toEqual([]);
    expect(shedKeys([], 3, 6)).toEqual([]);
  });

  it("sheds an address's oldest slow connections down to its cap, whatever order they come in", () => {
    expect(shedKeys(slow('a@50', 'a@10', 'a@40', 'a@20', 'a@30'), 3, 0)).toEqual(['a@10 (address)', 'a@20 (address)']);
  });

  it('leaves other addresses alone, even when their connections are older', () => {
    expect(shedKeys(slow('b@1', 'a@10', 'b@2', 'a@20', 'a@30', 'a@40'), 3, 0)).toEqual(['a@10 (address)']);
  });

  it('sheds the oldest of all for the total cap, from any address', () => {
    expect(shedKeys(slow('a@30', 'b@10', 'c@20', 'a@40', 'b@50'), 0, 3)).toEqual(['b@10 (total)', 'c@20 (total)']);
  });

  it('applies the per-address cap first, then the total to what is left', () => {
    // a holds 4 against a cap of 2: its two oldest go. Left: a@30, a@40, b@5, b@25; the total of 3 then takes b@5, the oldest left.
    expect(shedKeys(slow('a@10', 'a@20', 'a@30', 'a@40', 'b@5', 'b@25'), 2, 3)).toEqual([
      'a@10 (address)',
      'a@20 (address)',
      'b@5 (total)',
    ]);
  });

  it('a cap of 0 is no cap', () => {
    const many = slow(...Array.from({ length: 100 }, (_, index) => `a@${index}`));
    expect(shedKeys(many, 0, 0)).toEqual([]);
    expect(shedKeys(many, 0, 99)).toEqual(['a@0 (total)']);
    expect(shedKeys(many, 99, 0)).toEqual(['a@0 (address)']);
  });

  it('of connections equally old, sheds the one listed first, and leaves the list as it was', () => {
    const connections = ['first', 'second', 'third'].map((key) => ({ key, address: 'a', since: 7 }));
    expect(shedKeys(connections, 2, 0)).toEqual(['first (address)']);
    expect(connections.map((connection) => connection.key)).toEqual(['first', 'second', 'third']);
  });

  it('a cap of 1 keeps only the newest of each address', () => {
    expect(shedKeys(slow('a@3', 'b@1', 'a@1', 'b@3', 'a@2', 'b@2'), 1, 0)).toEqual([
      'b@1 (address)',
      'a@1 (address)',
      'a@2 (address)',
      'b@2 (address)',
    ]);
  });
});
