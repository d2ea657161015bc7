/**
 * HTML for the dashboard: the `html` tag escapes every interpolated value
 * unless it is already `SafeHtml` (made by this tag), so a page is built from
 * template literals without a single unescaped string from a trace, a model
 * name or a query parameter reaching the markup. Attribute values are always
 * quoted in the templates, and quotes are escaped, so a value cannot leave its
 * attribute either.
 */

export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = SafeHtml | string | number | null | undefined | readonly HtmlValue[];

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => entities[character] as string);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let text = strings[0] as string;
  for (let index = 0; index < values.length; index++) text += render(values[index] as HtmlValue) + (strings[index + 1] as string);
  return new SafeHtml(text);
}

/**
 * JSON for a `<script type="application/json">` block: `<`, `>` and `&` become
 * `\u003c`-style escapes (still the same JSON), so no string in the data can
 * close the script element or open a comment; U+2028/2029 are escaped for old
 * parsers.
 */
export function jsonForScript(value: unknown): SafeHtml {
  const text = JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return new SafeHtml(text);
}

/** A dashboard URL from path segments, each percent-encoded. */
export function dashboardPath(...segments: string[]): string {
  return ['/dashboard', ...segments.map(encodeURIComponent)].join('/');
}

export interface LayoutOptions {
  title: string;
  /** Shown in the header with the log-out button; absent on the login page. */
  account?: { name: string; keyPrefix: string };
  /** Breadcrumbs after "Overview", last one unlinked. */
  crumbs?: Array<{ label: string; href?: string }>;
  /** Pages with charts load uPlot and the chart script. */
  charts?: boolean;
}

export function layout(options: LayoutOptions, body: SafeHtml): SafeHtml {
  const crumbs = options.crumbs ?? [];
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<link rel="icon" href="data:,">
<title>${options.title} · taskgate</title>
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
${
  options.charts === true
    ? html`<link rel="stylesheet" href="/dashboard/assets/uPlot.min.css">
<script src="/dashboard/assets/uPlot.iife.min.js" defer></script>
<script src="/dashboard/assets/charts.js" defer></script>`
    : null
}
</head>
<body>
<header class="top">
  <a class="brand" href="/dashboard">taskgate</a>
  ${
    options.account === undefined
      ? null
      : html`<nav class="crumbs"><a href="/dashboard">Overview</a>${crumbs.map((crumb) => html`<span class="sep">/</span>${crumb.href === undefined ? html`<span>${crumb.label}</span>` : html`<a href="${crumb.href}">${crumb.label}</a>`}`)}</nav>
  <div class="who">
    <span class="account">account <strong>${options.account.name}</strong><span class="key"> · key <code>${options.account.keyPrefix}</code></span></span>
    <form method="post" action="/dashboard/logout"><button type="submit" class="link">Log out</button></form>
  </div>`
  }
</header>
<main>
${body}
</main>
</body>
</html>
`;
}

/** A page that only says something: a 404, a refused form, a failure. */
export function messagePage(title: string, message: string, account?: LayoutOptions['account']): SafeHtml {
  return layout(
    { title, account },
    html`<section class="panel"><h1>${title}</h1><p>${message}</p><p><a href="/dashboard">Back to the overview</a></p></section>`,
  );
}
