/**
 * The dashboard's static files under `/dashboard/assets/`: uPlot's browser
 * build and stylesheet straight from its npm package, our chart script and
 * our stylesheet. Read once, on first use, and served from memory with an
 * ETag. They hold nothing secret, so the login page can use them too.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { CHART_SCRIPT } from './chart-script.js';
import { DASHBOARD_CSS } from './styles.js';

export interface Asset {
  body: Buffer;
  contentType: string;
  etag: string;
}

const javascript = 'text/javascript; charset=utf-8';
const css = 'text/css; charset=utf-8';

function asset(body: Buffer | string, contentType: string): Asset {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return { body: bytes, contentType, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"` };
}

/** Name → asset; an unknown name is undefined (a 404). */
export function createAssets(): (name: string) => Asset | undefined {
  const require = createRequire(import.meta.url);
  const fromPackage = (path: string) => () => readFileSync(require.resolve(path));
  const sources: Record<string, { load: () => Buffer | string; contentType: string }> = {
    'uPlot.iife.min.js': { load: fromPackage('uplot/dist/uPlot.iife.min.js'), contentType: javascript },
    'uPlot.min.css': { load: fromPackage('uplot/dist/uPlot.min.css'), contentType: css },
    'charts.js': { load: () => CHART_SCRIPT, contentType: javascript },
    'dashboard.css': { load: () => DASHBOARD_CSS, contentType: css },
  };
  const loaded = new Map<string, Asset>();
  return (name) => {
    const cached = loaded.get(name);
    if (cached !== undefined) return cached;
    const source = Object.hasOwn(sources, name) ? sources[name] : undefined;
    if (source === undefined) return undefined;
    const made = asset(source.load(), source.contentType);
    loaded.set(name, made);
    return made;
  };
}
