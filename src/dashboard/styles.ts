/**
 * The dashboard's one stylesheet (served as `/dashboard/assets/dashboard.css`;
 * the CSP allows no inline style). Pages hold from a 320 px phone to a wide
 * screen: nothing may be wider than the viewport, and no table scrolls
 * sideways. Long unbroken values (ids, model names, messages, bodies) break
 * anywhere rather than push their box wider.
 */

/**
 * A table whose box is too narrow for its columns becomes one block per row,
 * each value under its column's name (the cells' `data-label`). Container
 * queries, not media queries: what matters is the table's own box, which a
 * panel's padding makes narrower than the page.
 */
function stackedTable(table: string): string {
  return `
${table} thead { display: none; }
${table} table, ${table} tbody, ${table} td { display: block; }
${table} tbody tr { display: flex; flex-wrap: wrap; gap: 6px 20px; padding: 10px 12px; border-bottom: 1px solid var(--line); }
${table} tbody tr:last-child { border-bottom: none; }
${table} td, ${table} td.num, ${table} td.fixed { flex: 1 1 auto; min-width: 0; padding: 0; border: none; font-size: 13px; text-align: left; white-space: normal; }
${table} td::before { content: attr(data-label); display: block; color: var(--muted); font-size: 11.5px; font-weight: 600; }
${table} td.long { flex-basis: 100%; }
${table} td:empty { display: none; }`;
}

export const DASHBOARD_CSS = `
:root { --ink: #111827; --muted: #6b7280; --line: #e5e7eb; --soft: #f6f7f9; --accent: #2563eb; --bad: #b91c1c; --good: #047857; --warn: #b45309; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: var(--soft); }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
code, .mono { overflow-wrap: anywhere; }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 20px; padding: 10px 24px; background: #fff; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; font-size: 16px; color: var(--ink); letter-spacing: -0.01em; }
/* One line: a crumb too long for it (a request id, which is also the page's heading) ends in an ellipsis. */
.crumbs { flex: 1 1 16em; min-width: 0; display: flex; align-items: baseline; color: var(--muted); white-space: nowrap; }
.crumbs > * { flex: none; max-width: 40%; overflow: hidden; text-overflow: ellipsis; }
.crumbs > :last-child { flex: 0 1 auto; min-width: 0; max-width: none; }
.crumbs .sep { flex: none; margin: 0 6px; color: #c0c4cc; }
.who { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 12px; min-width: 0; color: var(--muted); font-size: 13px; }
.who form { margin: 0; }
button.link { background: none; border: 1px solid var(--line); border-radius: 6px; padding: 3px 10px; color: var(--ink); cursor: pointer; font: inherit; white-space: nowrap; }
button.link:hover { background: var(--soft); }
main { max-width: 1240px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 20px; margin: 0; min-width: 0; overflow-wrap: anywhere; }
h2 { font-size: 15px; margin: 28px 0 10px; }
h3 { font-size: 13.5px; margin: 16px 0 8px; }
.heading { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 10px 16px; margin-bottom: 16px; }
.muted { color: var(--muted); }
.windows { display: inline-flex; border: 1px solid var(--line); border-radius: 7px; overflow: hidden; background: #fff; }
.windows a { padding: 4px 12px; color: var(--ink); border-left: 1px solid var(--line); }
.windows a:first-child { border-left: none; }
.windows a.on { background: var(--ink); color: #fff; }
.windows a:hover { text-decoration: none; background: var(--soft); }
.windows a.on:hover { background: var(--ink); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(170px, 100%), 1fr)); gap: 12px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 9px; padding: 12px 14px; min-width: 0; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; }
.card .value { font-size: 20px; font-weight: 600; margin-top: 2px; font-variant-numeric: tabular-nums; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.card .sub { color: var(--muted); font-size: 12.5px; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 9px; padding: 14px 16px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(360px, 100%), 1fr)); gap: 12px; }
.chart { background: #fff; border: 1px solid var(--line); border-radius: 9px; padding: 10px 12px 4px; min-width: 0; }
.chart h3 { margin: 0 0 6px; }
.chart .plot { min-height: 200px; min-width: 0; }
.uplot { font-family: inherit; }
.uplot .u-legend { font-size: 12px; text-align: left; margin-top: 2px; }
.uplot .u-legend th { font-weight: 500; }
.uplot .u-inline tr { margin-right: 10px; }
.table { container-type: inline-size; border: 1px solid var(--line); border-radius: 9px; overflow: hidden; background: #fff; }
table { width: 100%; border-collapse: collapse; background: #fff; }
th, td { padding: 7px 10px; text-align: left; vertical-align: top; border-bottom: 1px solid var(--line); }
th { font-size: 12px; font-weight: 600; color: var(--muted); background: #fafbfc; }
tr:last-child td { border-bottom: none; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num, td.fixed { white-space: nowrap; }
td { overflow-wrap: anywhere; }
td.long { min-width: 8em; }
td.id { min-width: 18em; }
@container (max-width: 600px) {${stackedTable('.table')}
}
@container (max-width: 720px) {${stackedTable('.table.medium')}
}
@container (max-width: 1000px) {${stackedTable('.table.wide')}
}
.empty { padding: 18px; color: var(--muted); background: #fff; border: 1px dashed var(--line); border-radius: 9px; }
.badge { display: inline-block; max-width: 100%; padding: 1px 8px; border-radius: 999px; font-size: 12px; background: var(--soft); border: 1px solid var(--line); overflow-wrap: anywhere; }
.badge.ok, .badge.certified { color: var(--good); background: #ecfdf5; border-color: #a7f3d0; }
.badge.error, .badge.eliminated { color: var(--bad); background: #fef2f2; border-color: #fecaca; }
.badge.aborted, .badge.cooling_down, .badge.pinned { color: var(--warn); background: #fffbeb; border-color: #fde68a; }
.bad { color: var(--bad); }
.route { margin-bottom: 14px; }
.route-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 8px 18px; margin-bottom: 10px; }
.route-head .arrow { font-size: 15px; overflow-wrap: anywhere; }
.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 18px; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.failure { margin-bottom: 12px; }
pre { background: #0f172a; color: #e2e8f0; padding: 12px 14px; border-radius: 8px; overflow: auto; max-height: 480px; white-space: pre-wrap; overflow-wrap: anywhere; }
.login { max-width: 380px; margin: 12vh auto 0; }
.login h1 { margin-bottom: 6px; }
.login form { display: grid; gap: 10px; margin-top: 16px; }
.login input { padding: 8px 10px; border: 1px solid #cbd0d8; border-radius: 7px; font: inherit; }
.login button { padding: 8px 10px; border: none; border-radius: 7px; background: var(--ink); color: #fff; font: inherit; font-weight: 600; cursor: pointer; }
.notice { padding: 8px 12px; border-radius: 7px; background: #fef2f2; color: var(--bad); border: 1px solid #fecaca; }
@media (max-width: 600px) {
  /* The brand and the account share the first line (without the key, and the account's name ends in an ellipsis if it must), the crumbs get the second. */
  header.top { padding: 8px 14px; gap: 4px 14px; }
  .who { flex: 1 1 0; justify-content: flex-end; flex-wrap: nowrap; }
  .who .key { display: none; }
  .who .account { display: flex; gap: 0.3em; min-width: 0; white-space: nowrap; }
  .who .account strong { min-width: 0; overflow: hidden; text-overflow: ellipsis; }
  .crumbs { order: 3; flex-basis: 100%; }
  main { padding: 14px 12px 40px; }
  h1 { font-size: 18px; }
  h2 { margin-top: 22px; }
  .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 8px; }
  .card { padding: 10px 12px; }
  .card .value { font-size: 18px; }
  .panel { padding: 12px; }
  .chart { padding: 8px 8px 2px; }
  .facts { grid-template-columns: minmax(0, 1fr); gap: 0; }
  .facts dt { margin-top: 8px; font-size: 12px; }
  .facts dt:first-child { margin-top: 0; }
}
`;
