/**
 * A single-reader async queue: callbacks push, one `for await` reads. It turns
 * node-llama-cpp's per-token callbacks into the batches the Engine contract
 * streams: each read takes every item pushed since the last one. Nothing is
 * dropped; a failure is thrown to the reader after the chunks that came
 * before it.
 */
export class ChunkChannel<Item> implements AsyncIterable<Item[]> {
  private readonly items: Item[] = [];
  private ended = false;
  private failure: { error: unknown } | null = null;
  private wake: (() => void) | null = null;

  push(item: Item): void {
    this.items.push(item);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  fail(error: unknown): void {
    this.failure = { error };
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item[]> {
    for (;;) {
      if (this.items.length > 0) {
        yield this.items.splice(0);
        continue;
      }
      if (this.failure !== null) throw this.failure.error;
      if (this.ended) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
