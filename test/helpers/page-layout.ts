/**
 * Checks that a page in the browser fits its viewport and that the labels
 * its charts draw on canvas do not collide. The in-page code is JavaScript in
 * strings, as elsewhere in the browser tests: this project's TypeScript has no
 * DOM types.
 *
 * Chart labels are not in the DOM (uPlot draws them on a canvas), so
 * `CANVAS_TEXT_RECORDER` (an init script, run before any page script) wraps
 * the canvas `fillText` and records every piece of text actually drawn, with
 * its box in CSS pixels: measured with the context's own `measureText` in its
 * font, alignment, baseline and transform at that moment. A full-canvas
 * `clearRect` (uPlot's first step in every redraw, a resize's too) starts the
 * record afresh, so it holds what is on the canvas now. The recorder knows
 * nothing of the chart script: it sees what reached the canvas.
 */
import type { Page } from 'playwright-core';

export const CANVAS_TEXT_RECORDER = String.raw`(() => {
  const drawn = new WeakMap();
  window.__drawnCanvasText = drawn;
  const prototype = CanvasRenderingContext2D.prototype;
  const clearRect = prototype.clearRect;
  const fillText = prototype.fillText;
  prototype.clearRect = function (x, y, width, height) {
    if (x <= 0 && y <= 0 && x + width >= this.canvas.width && y + height >= this.canvas.height) drawn.set(this.canvas, []);
    return clearRect.apply(this, arguments);
  };
  prototype.fillText = function (text, x, y) {
    const canvas = this.canvas;
    const metrics = this.measureText(text);
    const left = this.textAlign === 'right' || this.textAlign === 'end' ? x - metrics.width : this.textAlign === 'center' ? x - metrics.width / 2 : x;
    // The line box, not the ink: the font's ascent and descent, measured from the current textBaseline.
    const top = y - metrics.fontBoundingBoxAscent;
    const bottom = y + metrics.fontBoundingBoxDescent;
    const transform = this.getTransform();
    const corners = [[left, top], [left + metrics.width, top], [left, bottom], [left + metrics.width, bottom]].map(([cornerX, cornerY]) => transform.transformPoint({ x: cornerX, y: cornerY }));
    // Canvas pixels to CSS pixels: the canvas is drawn at the device pixel ratio.
    const scale = canvas.clientWidth === 0 ? 1 : canvas.width / canvas.clientWidth;
    const xs = corners.map((point) => point.x / scale);
    const ys = corners.map((point) => point.y / scale);
    const list = drawn.get(canvas) || [];
    list.push({ text: String(text), left: Math.min(...xs), right: Math.max(...xs), top: Math.min(...ys), bottom: Math.max(...ys), canvasWidth: canvas.clientWidth, canvasHeight: canvas.clientHeight });
    drawn.set(canvas, list);
    return fillText.apply(this, arguments);
  };
})();`;

export interface DrawnText {
  text: string;
  left: number;
  right: number;
  top: number;
  bottom: number;
  canvasWidth: number;
  canvasHeight: number;
}

export interface DrawnChart {
  id: string;
  /** The chart's container width and the width uPlot draws at, to check the chart follows its container. */
  containerWidth: number;
  chartWidth: number;
  /** Where the data is drawn on the canvas (uPlot's `.u-over` covers it): time labels go below, value labels left of it. */
  plot: { left: number; top: number; right: number; bottom: number };
  texts: DrawnText[];
}

/** Every chart (`.plot`) on the page with the text last drawn on its canvas. */
export async function drawnCharts(page: Page): Promise<DrawnChart[]> {
  return page.evaluate<DrawnChart[]>(`[...document.querySelectorAll('.plot')].map((plot) => {
    const canvas = plot.querySelector('canvas');
    const chart = plot.querySelector('.uplot');
    const over = plot.querySelector('.u-over');
    return {
      id: plot.id,
      containerWidth: plot.clientWidth,
      chartWidth: chart === null ? -1 : chart.getBoundingClientRect().width,
      plot: over === null ? { left: 0, top: 0, right: 0, bottom: 0 } : { left: over.offsetLeft, top: over.offsetTop, right: over.offsetLeft + over.offsetWidth, bottom: over.offsetTop + over.offsetHeight },
      texts: canvas === null ? [] : window.__drawnCanvasText.get(canvas) || [],
    };
  })`);
}

/**
 * Waits until every chart has been redrawn at its container's width (after a
 * viewport change, say). Polls from here: the dashboard's CSP forbids the
 * string evaluation `page.waitForFunction` would do in the page.
 */
export async function chartsSettled(page: Page, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Two frames first: a resize's redraw lands in the next one.
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    const charts = await drawnCharts(page);
    if (charts.length > 0 && charts.every((chart) => Math.abs(chart.chartWidth - chart.containerWidth) <= 1 && chart.texts.length > 0))
      return;
    if (Date.now() > deadline) return; // the caller's assertions say what is wrong
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * What is wrong with one chart: not as wide as its box, an axis without
 * labels, a label over the data, labels that overlap one another (any two of
 * the chart's labels, so neighbours on an axis and the two axes' labels
 * alike) or that the canvas edge cuts off.
 */
export function chartProblems(chart: DrawnChart): string[] {
  const problems: string[] = [];
  const { texts, plot } = chart;
  const describe = (text: DrawnText) =>
    `"${text.text}" [${text.left.toFixed(1)}..${text.right.toFixed(1)} x ${text.top.toFixed(1)}..${text.bottom.toFixed(1)}]`;
  if (Math.abs(chart.chartWidth - chart.containerWidth) > 1)
    problems.push(`${chart.id}: drawn ${chart.chartWidth} px wide in a ${chart.containerWidth} px box`);
  const timeLabels = texts.filter((text) => text.top >= plot.bottom - 0.5);
  const valueLabels = texts.filter((text) => text.right <= plot.left + 0.5 && text.top < plot.bottom - 0.5);
  if (timeLabels.length < 2 || valueLabels.length < 2)
    problems.push(`${chart.id}: ${timeLabels.length} time and ${valueLabels.length} value labels, want 2 of each at least`);
  for (const text of texts) {
    if (!timeLabels.includes(text) && !valueLabels.includes(text))
      problems.push(`${chart.id}: ${describe(text)} is drawn over the data (${plot.left}..${plot.right} x ${plot.top}..${plot.bottom})`);
  }
  for (const text of texts) {
    const tolerance = 0.5;
    if (
      text.left < -tolerance ||
      text.top < -tolerance ||
      text.right > text.canvasWidth + tolerance ||
      text.bottom > text.canvasHeight + tolerance
    ) {
      problems.push(`${chart.id}: ${describe(text)} is cut off by the ${text.canvasWidth}x${text.canvasHeight} canvas`);
    }
  }
  for (let first = 0; first < texts.length; first++) {
    for (let second = first + 1; second < texts.length; second++) {
      const one = texts[first] as DrawnText;
      const other = texts[second] as DrawnText;
      const apart = one.right <= other.left || other.right <= one.left || one.bottom <= other.top || other.bottom <= one.top;
      if (!apart) problems.push(`${chart.id}: ${describe(one)} overlaps ${describe(other)}`);
    }
  }
  return problems;
}

/**
 * What sticks out of the viewport: the page scrolling sideways, any element
 * whose box passes the left or right edge, any box that scrolls sideways or
 * cuts its content off (unless it shows an ellipsis).
 * Elements with no size, or inside a closed `<details>`, are not shown and
 * are ignored.
 */
export async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`(() => {
    const width = window.innerWidth;
    const problems = [];
    const name = (element) => {
      const classes = typeof element.className === 'string' && element.className !== '' ? '.' + element.className.trim().split(/\\s+/).join('.') : '';
      const text = (element.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
      return element.tagName.toLowerCase() + (element.id ? '#' + element.id : '') + classes + (text ? ' "' + text + '"' : '');
    };
    if (document.documentElement.scrollWidth > width) problems.push('the page is ' + document.documentElement.scrollWidth + ' px wide in a ' + width + ' px viewport');
    for (const element of document.querySelectorAll('body *')) {
      const closed = element.parentElement === null ? null : element.parentElement.closest('details:not([open])');
      if (closed !== null && element.closest('summary') === null) continue;
      const box = element.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      if (box.right > width + 0.5) problems.push(name(element) + ' ends at ' + box.right.toFixed(1) + ' px, past the ' + width + ' px viewport');
      if (box.left < -0.5) problems.push(name(element) + ' starts at ' + box.left.toFixed(1) + ' px, left of the viewport');
      const style = getComputedStyle(element);
      if (style.overflowX !== 'visible' && element.scrollWidth > element.clientWidth + 1) {
        if (style.overflowX === 'auto' || style.overflowX === 'scroll') problems.push(name(element) + ' scrolls sideways (' + element.scrollWidth + ' px of content in ' + element.clientWidth + ' px)');
        // Clipped content is lost unless an ellipsis says so.
        else if (style.textOverflow !== 'ellipsis') problems.push(name(element) + ' cuts off its content (' + element.scrollWidth + ' px of it in ' + element.clientWidth + ' px)');
      }
    }
    return problems;
  })()`);
}
