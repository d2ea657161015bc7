import { describe, expect, it } from 'vitest';
import { formatMs, formatRate, formatUsd } from './format.js';
import { dashboardPath, escapeHtml, html, jsonForScript, SafeHtml } from './html.js';

describe('html', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const hostile = `"><script>alert('x')</script>&`;
    const out = html`<a title="${hostile}">${hostile}</a>`.text;
    expect(out).toBe(
      '<a title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</a>',
    );
    expect(out).not.toContain('<script');
  });

  it('escapes inside arrays and keeps nested html as it is, escaped once', () => {
    const items = ['<b>', 'a&b'].map((item) => html`<li>${item}</li>`);
    expect(html`<ul>${items}</ul>`.text).toBe('<ul><li>&lt;b&gt;</li><li>a&amp;b</li></ul>');
    expect(html`${html`${'&'}`}`.text).toBe('&amp;');
  });

  it('writes nothing for null and undefined, and numbers as text', () => {
    expect(html`[${null}${undefined}${0}${1.5}]`.text).toBe('[01.5]');
  });

  it('trusts only SafeHtml, never a look-alike object', () => {
    const fake = { text: '<script>', toString: () => '<script>' } as unknown as string;
    expect(html`${fake}`.text).toBe('&lt;script&gt;');
    expect(html`${new SafeHtml('<br>')}`.text).toBe('<br>');
    expect(escapeHtml(`'"`)).toBe('&#39;&quot;');
  });
});

describe('jsonForScript', () => {
  it('cannot close the script element or open a comment, and parses back to the same value', () => {
    const value = { name: '</script><script>alert(1)</script>', comment: '<!-- x -->', amp: 'a&b', separator: 'a\u2028b' };
    const text = jsonForScript(value).text;
    expect(text).not.toMatch(/<|>|&|\u2028/);
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe('dashboardPath', () => {
  it('percent-encodes each segment', () => {
    expect(dashboardPath('traces', 'a/b?c#d')).toBe('/dashboard/traces/a%2Fb%3Fc%23d');
    expect(dashboardPath()).toBe('/dashboard');
  });
});

describe('formats', () => {
  it('writes small costs with three significant digits and larger ones in cents', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(0.0123)).toBe('$0.0123');
    expect(formatUsd(0.000042)).toBe('$0.0000420');
    expect(formatUsd(0.5)).toBe('$0.500');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
  });

  it('writes rates and durations', () => {
    expect(formatRate(0)).toBe('0%');
    expect(formatRate(3 / 19)).toBe('15.8%');
    expect(formatMs(null)).toBe('—');
    expect(formatMs(12.4)).toBe('12 ms');
    expect(formatMs(1500)).toBe('1.50 s');
  });
});
