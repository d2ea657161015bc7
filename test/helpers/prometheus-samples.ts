/** Reading `/metrics` in tests: one metric's samples out of the Prometheus text, and their sum. */

export interface PrometheusSample {
  labels: Record<string, string>;
  value: number;
}

/** Samples of one metric in the Prometheus text, with their labels. */
export function samples(text: string, name: string): PrometheusSample[] {
  const found: PrometheusSample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="([^"]*)"/g)) labels[pair[1] as string] = pair[2] as string;
    found.push({ labels, value: Number(match[3]) });
  }
  return found;
}

/** The sum of one metric's samples whose labels pass `where`. */
export const total = (text: string, name: string, where: (labels: Record<string, string>) => boolean = () => true) =>
  samples(text, name)
    .filter((sample) => where(sample.labels))
    .reduce((sum, sample) => sum + sample.value, 0);
