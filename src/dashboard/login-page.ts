/** The login form. The key field is never filled back in: a failed attempt shows an empty form. */
import { html, layout, type SafeHtml } from './html.js';

export function renderLoginPage(options: { error?: string; next?: string } = {}): SafeHtml {
  return layout(
    { title: 'Log in' },
    html`<section class="login panel">
  <h1>Dashboard</h1>
  <p class="muted">Log in with an admin key of your taskgate account. The key stays on the server: the browser keeps only a session cookie.</p>
  ${options.error === undefined ? null : html`<p class="notice" role="alert">${options.error}</p>`}
  <form method="post" action="/dashboard/login">
    <label for="key">Admin key</label>
    <input id="key" name="key" type="password" autocomplete="off" spellcheck="false" placeholder="tg_live_…" required autofocus>
    ${options.next === undefined ? null : html`<input type="hidden" name="next" value="${options.next}">`}
    <button type="submit">Log in</button>
  </form>
</section>`,
  );
}
