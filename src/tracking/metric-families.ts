/**
 * The per-call counters and histograms of `/metrics`, kept as plain numbers
 * in cells bound to their label set once.
 *
 * prom-client hashes and checks a call's labels on every `inc` and
 * `observe` (it builds a key string from the label object each time): with
 * nine observations a call, that was some 8 % of a call's CPU at saturation
 * (docs/benchmarks.md). Here a call adds to the numbers of cells it already
 * holds; the labels are read only at scrape time, when each family is handed
 * over in prom-client's own JSON form (`MetricObjectWithValues`), so
 * `AggregatorRegistry` renders and sums them exactly as it does its own
 * counters and histograms (`metrics.ts`).
 */
type Labels = Readonly<Record<string, string>>;

/** A counter's value for one label set. */
export interface CounterCell {
  value: number;
}

/** A histogram's counts for one label set: per bucket (not cumulative), their sum and count. */
export interface HistogramCell {
  readonly bounds: readonly number[];
  readonly counts: number[];
  sum: number;
  count: number;
}

/** One sample: a bucket, sum or count names its series in `metricName`. */
interface SampleValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * A family in prom-client's JSON form, as `Registry.getMetricsAsJSON` lists
 * its own (prom-client's typings say `type` is a numeric enum; at run time,
 * and for `AggregatorRegistry`, it is the text).
 */
export interface FamilySnapshot {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: SampleValue[];
}

/** A family's cells, one per label set, made on first use; its subclass says what a cell holds and how it is exposed. */
abstract class CellFamily<Cell> {
  protected readonly cells = new Map<string, { labels: Labels; cell: Cell }>();

  constructor(
    readonly name: string,
    protected readonly help: string,
  ) {}

  /** The cell of these labels, made on first use: keep it and add to it. */
  cell(labels: Labels): Cell {
    let key = '';
    for (const name in labels) key += `${name}\u0000${labels[name]}\u0000`;
    let entry = this.cells.get(key);
    if (entry === undefined) this.cells.set(key, (entry = { labels, cell: this.newCell() }));
    return entry.cell;
  }

  protected abstract newCell(): Cell;
  abstract snapshot(): FamilySnapshot;
}

export class CounterFamily extends CellFamily<CounterCell> {
  protected newCell(): CounterCell {
    return { value: 0 };
  }

  snapshot(): FamilySnapshot {
    const values: SampleValue[] = [];
    for (const { labels, cell } of this.cells.values()) values.push({ labels: { ...labels }, value: cell.value });
    return { name: this.name, help: this.help, type: 'counter', aggregator: 'sum', values };
  }
}

export class HistogramFamily extends CellFamily<HistogramCell> {
  /** `bounds`: the buckets' upper bounds, ascending (`+Inf` is implied). */
  constructor(
    name: string,
    help: string,
    private readonly bounds: readonly number[],
  ) {
    super(name, help);
  }

  protected newCell(): HistogramCell {
    return { bounds: this.bounds, counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
  }

  /** The classic exposition: cumulative `_bucket{le}` per bound and `+Inf`, then `_sum` and `_count`. */
  snapshot(): FamilySnapshot {
    const values: SampleValue[] = [];
    for (const { labels, cell } of this.cells.values()) {
      let cumulative = 0;
      for (let index = 0; index <= this.bounds.length; index++) {
        cumulative += cell.counts[index] ?? 0;
        const bound = this.bounds[index];
        values.push({
          labels: { ...labels, le: bound === undefined ? '+Inf' : bound },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      }
      values.push({ labels: { ...labels }, value: cell.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...labels }, value: cell.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }
}

/** Counts one value in its bucket (the first bound it does not exceed). */
export function observe(cell: HistogramCell, value: number): void {
  const bounds = cell.bounds;
  let index = 0;
  while (index < bounds.length && value > (bounds[index] as number)) index++;
  cell.counts[index] = (cell.counts[index] ?? 0) + 1;
  cell.sum += value;
  cell.count += 1;
}
