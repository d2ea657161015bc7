import { describe, expect, it } from 'vitest';
import { createRecordRing, RecordRingReader, RecordRingWriter } from './record-ring.js';

/** Writes one record of a number and a string; false when the ring refused it. */
function put(writer: RecordRingWriter, sequence: number, text: string): boolean {
  if (!writer.begin(8 + RecordRingWriter.stringBytes(text))) return false;
  writer.u32(sequence);
  writer.string(text);
  writer.commit();
  return true;
}

function take(reader: RecordRingReader): { sequence: number; text: string }[] {
  const records: { sequence: number; text: string }[] = [];
  reader.drain((ring) => records.push({ sequence: ring.u32(), text: ring.string() }));
  return records;
}

describe('record ring', () => {
  it('hands every record over in order, whole, as the ring wraps round many times', () => {
    const ring = createRecordRing(600);
    const writer = new RecordRingWriter(ring);
    const reader = new RecordRingReader(ring);
    const sent: { sequence: number; text: string }[] = [];
    const received: { sequence: number; text: string }[] = [];
    for (let sequence = 0; sequence < 2_000; sequence++) {
      // Records of 0 to 40 characters: some fit the end of the ring, some go back to its front.
      const text = 'x'.repeat((sequence * 7) % 41);
      if (put(writer, sequence, text)) sent.push({ sequence, text });
      if (sequence % 3 === 2) received.push(...take(reader));
    }
    received.push(...take(reader));
    expect(sent.length).toBe(2_000);
    expect(received).toEqual(sent);
  });

  it('refuses a record when the reader is behind, instead of overwriting, and takes records again once it has read', () => {
    const ring = createRecordRing(256);
    const writer = new RecordRingWriter(ring);
    const reader = new RecordRingReader(ring);
    let written = 0;
    while (put(writer, written, 'a record that takes room')) written++;
    expect(written).toBeGreaterThan(2);
    expect(put(writer, written, 'a record that takes room')).toBe(false);
    expect(take(reader).map((record) => record.sequence)).toEqual([...Array(written).keys()]);
    expect(put(writer, written, 'room again')).toBe(true);
    expect(take(reader)).toEqual([{ sequence: written, text: 'room again' }]);
  });

  it('carries strings outside ASCII unchanged', () => {
    const ring = createRecordRing(1024);
    const writer = new RecordRingWriter(ring);
    const reader = new RecordRingReader(ring);
    const texts = ['café', 'модель', '模型 🚀', 'ascii then é', ''];
    texts.forEach((text, sequence) => expect(put(writer, sequence, text)).toBe(true));
    expect(take(reader).map((record) => record.text)).toEqual(texts);
  });

  it('wakes a sleeping reader when a record is published', async () => {
    const ring = createRecordRing(256);
    const writer = new RecordRingWriter(ring);
    const reader = new RecordRingReader(ring);
    // Without the wake-up this waits a minute, and the test fails on its time limit.
    const sleeping = reader.sleep(60_000);
    put(writer, 1, 'wake up');
    await sleeping;
    expect(take(reader)).toEqual([{ sequence: 1, text: 'wake up' }]);
  });
});
