/**
 * The request every path is measured with: a realistic ~1 KB chat call, and
 * the check that a path answers it correctly before anything is measured.
 */

const systemPrompt =
  'You are the support assistant of an online hardware shop. Answer in two or three short sentences, in a friendly and factual tone. ' +
  'If the question is about an order, ask for the order number; never invent tracking details, prices or delivery dates. ' +
  'Mention the returns policy (30 days, unused items in their original packaging) only when it applies.';
const userMessage =
  'Hello! I ordered a 27-inch monitor and a USB-C docking station last Tuesday. The monitor arrived yesterday, but the dock is still ' +
  'missing and the tracking page has not changed for three days. The monitor also has a small scratch on the lower bezel, which I only ' +
  'noticed after removing the protective film. Can I return just the monitor and keep the rest of the order, and will the dock still ' +
  'arrive this week? I would rather not cancel everything, because I need the dock for work on Monday.';

/** @param {string} model @param {boolean} stream */
export function chatBody(model, stream) {
  /** @type {Record<string, unknown>} */
  const body = {
    model,
    messages: [
      { role: 'system', content: systemPrompt },
      { role: 'user', content: userMessage },
    ],
    max_tokens: 256,
    temperature: 0.2,
  };
  if (stream) {
    body.stream = true;
    // Asked for, so both paths send the same 23 events (the usage chunk included).
    body.stream_options = { include_usage: true };
  }
  return JSON.stringify(body);
}

/** @param {string} key */
export function chatHeaders(key) {
  // The same headers go to the mock, so both paths parse the same request.
  return {
    'content-type': 'application/json',
    authorization: `Bearer ${key}`,
    'x-taskgate-project': 'bench',
    'x-taskgate-workload': 'overhead',
  };
}

/**
 * @typedef {object} LoadTarget
 * @property {string} url
 * @property {string[]} [urls]  several servers answering alike: the load is spread over them in turn (url is the first)
 * @property {Record<string, string>} headers
 * @property {string} body
 */

/**
 * Both paths must give the same, correct replies, or the comparison means nothing.
 * @param {LoadTarget} target
 * @param {boolean} stream
 * @param {string} label
 */
export async function checkReply(target, stream, label) {
  const urls = target.urls ?? [target.url];
  for (const [index, url] of urls.entries())
    await checkOneReply(url, target, stream, urls.length > 1 ? `${label}, server ${index + 1}/${urls.length}` : label);
}

/** @param {string} url @param {LoadTarget} target @param {boolean} stream @param {string} label */
async function checkOneReply(url, target, stream, label) {
  const response = await fetch(url, { method: 'POST', headers: target.headers, body: target.body, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${label}: HTTP ${response.status}: ${text.slice(0, 500)}`);
  if (stream) {
    const events = text.split('\n\n').filter((event) => event.startsWith('data: '));
    const usageEvents = events.filter((event) => event.includes('"usage"') && event.includes('"choices":[]'));
    if (events.length !== 24 || events[23] !== 'data: [DONE]' || usageEvents.length !== 1) {
      throw new Error(`${label}: expected 23 events with a usage chunk, then [DONE]; got ${events.length} events:\n${text.slice(0, 800)}`);
    }
  } else {
    const body = JSON.parse(text);
    if (body.object !== 'chat.completion' || body.usage?.completion_tokens !== 20)
      throw new Error(`${label}: unexpected reply ${text.slice(0, 500)}`);
  }
}
