/** The dashboard's one stylesheet (served as `/dashboard/assets/dashboard.css`; the CSP allows no inline style). */
export const DASHBOARD_CSS = `
:root { --ink: #111827; --muted: #6b7280; --line: #e5e7eb; --soft: #f6f7f9; --accent: #2563eb; --bad: #b91c1c; --good: #047857; --warn: #b45309; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: var(--soft); }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
header.top { display: flex; align-items: center; gap: 20px; padding: 10px 24px; background: #fff; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; font-size: 16px; color: var(--ink); letter-spacing: -0.01em; }
.crumbs { flex: 1; color: var(--muted); }
.crumbs .sep { margin: 0 6px; color: #c0c4cc; }
.who { display: flex; align-items: center; gap: 12px; color: var(--muted); font-size: 13px; }
.who form { margin: 0; }
button.link { background: none; border: 1px solid var(--line); border-radius: 6px; padding: 3px 10px; color: var(--ink); cursor: pointer; font: inherit; }
button.link:hover { background: var(--soft); }
main { max-width: 1240px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 20px; margin: 0; }
h2 { font-size: 15px; margin: 28px 0 10px; }
h3 { font-size: 13.5px; margin: 16px 0 8px; }
.heading { display: flex; align-items: center; justify-content: space-between; gap: 16px; margin-bottom: 16px; }
.muted { color: var(--muted); }
.windows { display: inline-flex; border: 1px solid var(--line); border-radius: 7px; overflow: hidden; background: #fff; }
.windows a { padding: 4px 12px; color: var(--ink); border-left: 1px solid var(--line); }
.windows a:first-child { border-left: none; }
.windows a.on { background: var(--ink); color: #fff; }
.windows a:hover { text-decoration: none; background: var(--soft); }
.windows a.on:hover { background: var(--ink); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 12px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 9px; padding: 12px 14px; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; }
.card .value { font-size: 20px; font-weight: 600; margin-top: 2px; font-variant-numeric: tabular-nums; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.card .sub { color: var(--muted); font-size: 12.5px; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 9px; padding: 14px 16px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(360px, 1fr)); gap: 12px; }
.chart { background: #fff; border: 1px solid var(--line); border-radius: 9px; padding: 10px 12px 4px; min-width: 0; }
.chart h3 { margin: 0 0 6px; }
.chart .plot { min-height: 200px; }
.uplot { font-family: inherit; }
.uplot .u-legend { font-size: 12px; text-align: left; margin-top: 2px; }
.uplot .u-legend th { font-weight: 500; }
table { width: 100%; border-collapse: collapse; background: #fff; }
.table { border: 1px solid var(--line); border-radius: 9px; overflow: hidden; overflow-x: auto; }
th, td { padding: 7px 12px; text-align: left; border-bottom: 1px solid var(--line); white-space: nowrap; }
th { font-size: 12px; font-weight: 600; color: var(--muted); background: #fafbfc; }
tr:last-child td { border-bottom: none; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { white-space: normal; word-break: break-word; }
.empty { padding: 18px; color: var(--muted); background: #fff; border: 1px dashed var(--line); border-radius: 9px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; background: var(--soft); border: 1px solid var(--line); }
.badge.ok, .badge.certified { color: var(--good); background: #ecfdf5; border-color: #a7f3d0; }
.badge.error, .badge.eliminated { color: var(--bad); background: #fef2f2; border-color: #fecaca; }
.badge.aborted, .badge.cooling_down, .badge.pinned { color: var(--warn); background: #fffbeb; border-color: #fde68a; }
.bad { color: var(--bad); }
.route { margin-bottom: 14px; }
.route-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 8px 18px; margin-bottom: 10px; }
.route-head .arrow { font-size: 15px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 18px; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; word-break: break-word; }
.failure { margin-bottom: 12px; }
pre { background: #0f172a; color: #e2e8f0; padding: 12px 14px; border-radius: 8px; overflow: auto; max-height: 480px; white-space: pre-wrap; word-break: break-word; }
.login { max-width: 380px; margin: 12vh auto 0; }
.login h1 { margin-bottom: 6px; }
.login form { display: grid; gap: 10px; margin-top: 16px; }
.login input { padding: 8px 10px; border: 1px solid #cbd0d8; border-radius: 7px; font: inherit; }
.login button { padding: 8px 10px; border: none; border-radius: 7px; background: var(--ink); color: #fff; font: inherit; font-weight: 600; cursor: pointer; }
.notice { padding: 8px 12px; border-radius: 7px; background: #fef2f2; color: var(--bad); border: 1px solid #fecaca; }
`;
