/** The dashboard's login, sessions and pages through the real app over HTTP (the browser run is test/dashboard.test.ts). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedEngine, type ScriptedEngine } from '../../test/helpers/scripted-engine.js';
import { ADMIN_KEY, engineConfig, startTestGateway, type TestGateway } from '../../test/helpers/test-gateway.js';

let engine: ScriptedEngine;
let taskgate: TestGateway;
let origin: string;
let hostileRequestId: string;

beforeAll(async () => {
  engine = await startScriptedEngine();
  taskgate = await startTestGateway(engineConfig([engine.baseUrl]));
  origin = taskgate.origin;
  const reply = await taskgate.postChat(
    {
      model: 'model-0',
      messages: [{ role: 'user', content: '</pre><script>alert("owned")</script>' }],
      metadata: { note: '<img src=x onerror=alert(1)>' },
    },
    { headers: { 'x-taskgate-project': 'shop', 'x-taskgate-workload': 'summarise' } },
  );
  hostileRequestId = reply.headers.get('x-request-id') as string;
  await reply.text();
  await taskgate.traces();
});
afterAll(async () => {
  await taskgate?.stop();
  await engine?.close();
});

function get(path: string, cookie?: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${origin}${path}`, { redirect: 'manual', headers: { ...(cookie === undefined ? {} : { cookie }), ...headers } });
}

function postForm(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${origin}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin, ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

async function logIn(key = ADMIN_KEY): Promise<string> {
  const response = await postForm('/dashboard/login', { key }, {});
  expect(response.status).toBe(303);
  const cookie = response.headers.get('set-cookie') as string;
  return cookie.split(';')[0] as string;
}

describe('login', () => {
  it('sends a visitor without a session to the login form, and back where they were after it', async () => {
    const overview = await get('/dashboard');
    expect(overview.status).toBe(303);
    expect(overview.headers.get('location')).toBe('/dashboard/login');
    const deep = await get('/dashboard/projects/shop/workloads/summarise?since=7d');
    expect(deep.headers.get('location')).toBe(
      `/dashboard/login?next=${encodeURIComponent('/dashboard/projects/shop/workloads/summarise?since=7d')}`,
    );

    const form = await get(deep.headers.get('location') as string);
    expect(form.status).toBe(200);
    expect(form.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(form.headers.get('content-security-policy')).toContain("script-src 'self'");
    const page = await form.text();
    expect(page).toContain('<form method="post" action="/dashboard/login">');
    expect(page).toContain('value="/dashboard/projects/shop/workloads/summarise?since=7d"');

    const response = await postForm(
      '/dashboard/login',
      { key: ADMIN_KEY, next: '/dashboard/projects/shop/workloads/summarise?since=7d' },
      {},
    );
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/dashboard/projects/shop/workloads/summarise?since=7d');
  });

  it('sets an HttpOnly, SameSite=Strict session cookie holding a random id, not the key', async () => {
    const response = await postForm('/dashboard/login', { key: ADMIN_KEY }, {});
    expect(response.headers.get('location')).toBe('/dashboard');
    const cookie = response.headers.get('set-cookie') as string;
    expect(cookie).toMatch(/^taskgate_session=[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/dashboard; HttpOnly; SameSite=Strict$/);
    expect(cookie).not.toContain(ADMIN_KEY);
    const overTls = await postForm(
      '/dashboard/login',
      { key: ADMIN_KEY },
      { 'x-forwarded-proto': 'https', origin: origin.replace('http:', 'https:') },
    );
    expect(overTls.headers.get('set-cookie')).toMatch(/; Secure$/);
  });

  it('refuses a wrong key and an inference key with the form again, 401, and no cookie', async () => {
    const inference = await taskgate.createKey({ role: 'inference' });
    for (const key of ['tg_live_nope', inference.text, '']) {
      const response = await postForm('/dashboard/login', { key }, {});
      expect(response.status).toBe(401);
      expect(response.headers.get('set-cookie')).toBeNull();
      const page = await response.text();
      expect(page).toContain('not an admin key');
      if (key !== '') expect(page).not.toContain(key);
    }
  });

  it('refuses a form posted from another site or without an Origin', async () => {
    const crossSite = await postForm('/dashboard/login', { key: ADMIN_KEY }, { origin: 'http://evil.example' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.headers.get('set-cookie')).toBeNull();
    const cookie = await logIn();
    const logout = await fetch(`${origin}/dashboard/logout`, { method: 'POST', redirect: 'manual', headers: { cookie } });
    expect(logout.status).toBe(403);
    expect((await get('/dashboard', cookie)).status).toBe(200);
  });

  it('logs out: the session ends on the server, not only in the browser', async () => {
    const cookie = await logIn();
    const response = await postForm('/dashboard/logout', {}, { cookie });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/dashboard/login');
    expect(response.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await get('/dashboard', cookie)).status).toBe(303);
  });

  it('ends a session when its key is revoked or the cookie is made up', async () => {
    const admin = await taskgate.createKey({ role: 'admin' });
    const cookie = await logIn(admin.text);
    expect((await get('/dashboard', cookie)).status).toBe(200);
    const revoke = await fetch(`${taskgate.baseUrl}/keys/${admin.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(revoke.status).toBe(200);
    expect((await get('/dashboard', cookie)).status).toBe(303);
    expect((await get('/dashboard', `taskgate_session=${'A'.repeat(43)}`)).status).toBe(303);
  });
});

describe('pages', () => {
  it('show the workload and its calls, and never the key', async () => {
    const cookie = await logIn();
    const overview = await (await get('/dashboard', cookie)).text();
    expect(overview).toMatch(/<tr data-project="shop" data-workload="summarise">[\s\S]*?data-field="calls">1</);
    const workload = await get('/dashboard/projects/shop/workloads/summarise', cookie);
    expect(workload.status).toBe(200);
    const page = await workload.text();
    expect(page).toContain(`href="/dashboard/traces/${hostileRequestId}"`);
    expect(page).toContain('<script type="application/json" id="chart-data">');
    for (const text of [overview, page]) expect(text).not.toContain(ADMIN_KEY);
  });

  it('escape what the caller sent when showing a trace', async () => {
    const cookie = await logIn();
    const response = await get(`/dashboard/traces/${hostileRequestId}`, cookie);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('&lt;/pre&gt;&lt;script&gt;alert(');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain('<img src=x');
  });

  it("answer 404 for an unknown trace, another account's project and an unknown page", async () => {
    const cookie = await logIn();
    expect((await get('/dashboard/traces/req_nope', cookie)).status).toBe(404);
    expect((await get('/dashboard/projects/nope/workloads/main', cookie)).status).toBe(404);
    expect((await get('/dashboard/elsewhere', cookie)).status).toBe(404);
    expect((await fetch(`${origin}/dashboard`, { method: 'DELETE', headers: { cookie }, redirect: 'manual' })).status).toBe(405);
  });

  it('serve uPlot and the chart script without a session, with an ETag', async () => {
    const script = await get('/dashboard/assets/uPlot.iife.min.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toContain('uPlot');
    const etag = script.headers.get('etag') as string;
    expect((await get('/dashboard/assets/uPlot.iife.min.js', undefined, { 'if-none-match': etag })).status).toBe(304);
    expect((await get('/dashboard/assets/charts.js')).status).toBe(200);
    expect((await get('/dashboard/assets/../../package.json')).status).not.toBe(200);
    expect((await get('/dashboard/assets/nope.js')).status).toBe(404);
  });
});
