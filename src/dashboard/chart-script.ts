/**
 * The only script the dashboard runs in the browser (served as
 * `/dashboard/assets/charts.js`): it draws uPlot time charts from the JSON the
 * workload page embeds in `<script type="application/json" id="chart-data">`.
 * Everything else on the pages is server-rendered HTML. Plain ES2017 in a
 * string, because the project's TypeScript compiles for Node, not the DOM.
 *
 * Data: `{ x: [epoch seconds], charts: [{ id, unit, series: [{ label, color, values }] }] }`,
 * drawn into `#chart-<id>`. Isolated values (an empty bucket on each side)
 * get a point, since a line needs two.
 *
 * Axis labels must never overlap or be cut off, whatever the chart's width
 * or the size of its numbers. uPlot does not measure labels; this script
 * does, in the font they are drawn in: ticks are spaced for the widest time
 * label there can be (so narrow charts get fewer), the value gutter is as
 * wide as its widest label, the right padding holds half the last time
 * label, and any label that would still come too close to the one before is
 * left out. Charts follow their box's width (a ResizeObserver), not the
 * window's.
 */
export const CHART_SCRIPT = String.raw`(function () {
  'use strict';
  var source = document.getElementById('chart-data');
  if (source === null || typeof uPlot === 'undefined') return;
  var data = JSON.parse(source.textContent);

  var HEIGHT = 170;
  var FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
  var LINE = 15; // the font's line box, the vertical extent of a value label
  var GAP = 12; // the least free space between two labels
  var TICK = 4;
  var TICK_GAP = 4;
  var measurer = document.createElement('canvas').getContext('2d');
  measurer.font = FONT;
  function textWidth(text) { return measurer.measureText(text).width; }

  // Times are UTC, as everywhere on the pages (the server does not know the viewer's zone).
  var DAY = 86400;
  var MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  function two(number) { return number < 10 ? '0' + number : String(number); }
  function timeLabel(seconds, step) {
    var date = new Date(seconds * 1000);
    var midnight = date.getUTCHours() === 0 && date.getUTCMinutes() === 0;
    return step >= DAY || midnight ? MONTHS[date.getUTCMonth()] + ' ' + date.getUTCDate() : two(date.getUTCHours()) + ':' + two(date.getUTCMinutes());
  }
  var widestTime = Math.max.apply(null, ['00:00'].concat(MONTHS.map(function (month) { return month + ' 30'; })).map(textWidth));

  // Legend values (the hovered bucket), in full.
  function fixed(value, digits) { return Number(value.toFixed(digits)).toString(); }
  var formats = {
    count: function (value) { return value === null ? '-' : value >= 1000 ? fixed(value / 1000, 1) + 'k' : fixed(value, 1); },
    usd: function (value) {
      if (value === null) return '-';
      if (value === 0) return '$0';
      var magnitude = Math.abs(value);
      return '$' + (magnitude >= 1 ? value.toFixed(2) : value.toFixed(Math.min(10, Math.max(2, 2 - Math.floor(Math.log10(magnitude))))));
    },
    ms: function (value) { return value === null ? '-' : value >= 1000 ? fixed(value / 1000, 2) + ' s' : Math.round(value) + ' ms'; },
    rate: function (value) { return value === null ? '-' : fixed(value * 100, 1) + '%'; },
  };

  // Axis values: short, one unit per axis, as many decimals as the tick step needs.
  function decimals(step) {
    for (var digits = 0; digits < 8; digits++) {
      var shifted = step * Math.pow(10, digits);
      if (Math.abs(shifted - Math.round(shifted)) < 1e-6 * Math.max(1, shifted)) return digits;
    }
    return 8;
  }
  // The units an axis's values may be written in, as [divisor, suffix].
  var UNITS = {
    count: [[1, ''], [1e3, 'k'], [1e6, 'M'], [1e9, 'B']],
    usd: [[1, ''], [1e3, 'k'], [1e6, 'M']],
    ms: [[1, ' ms'], [1000, ' s'], [60000, ' min']],
    rate: [[0.01, '%']],
  };
  function labelsIn(unit, divisor, splits, step) {
    var prefix = unit === 'usd' ? '$' : '';
    var digits = decimals(step / divisor[0]);
    if (unit === 'usd' && divisor[0] === 1 && digits > 0) digits = Math.max(2, digits); // cents
    var number = new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
    return splits.map(function (value) {
      // A bare zero for counts and money ("0", "$0"), with its unit for durations and rates.
      if (value === 0) return prefix + '0' + (unit === 'count' || unit === 'usd' ? '' : divisor[1]);
      return prefix + number.format(value / divisor[0]) + divisor[1];
    });
  }
  // One unit for the whole axis: the one whose widest label is narrowest ("6k" over "6,000", "1.5 s" over "1,500 ms"),
  // a decimal digit counting extra against it ("$1,000" over "$1.00k").
  function tickLabels(unit, splits, step) {
    var top = Math.max.apply(null, splits.map(Math.abs));
    var best = null;
    (UNITS[unit] || UNITS.count).forEach(function (divisor, index) {
      if (index > 0 && divisor[0] > top) return;
      var labels = labelsIn(unit, divisor, splits, step);
      var cost = Math.max.apply(null, labels.map(textWidth)) + 4 * decimals(step / divisor[0]);
      if (best === null || cost < best.cost) best = { labels: labels, cost: cost };
    });
    return best.labels;
  }
  // Tick steps for counts and milliseconds: whole numbers (no axis at 0.5 calls), 1, 2, 2.5 and 5 times a power of ten.
  var wholeSteps = [];
  for (var power = 1; power <= 1e15; power *= 10) wholeSteps.push(power, 2 * power, 5 * power, 25 * power / 10);
  wholeSteps = wholeSteps.filter(function (step) { return step % 1 === 0; }).sort(function (a, b) { return a - b; });

  // Leaves out any label that would come within GAP of the last one kept.
  function keepApart(self, scale, splits, labels, extent) {
    var last = null;
    return labels.map(function (label, index) {
      var position = self.valToPos(splits[index], scale);
      var size = extent(label);
      if (last !== null && Math.abs(position - last.position) < (size + last.size) / 2 + GAP) return null;
      last = { position: position, size: size };
      return label;
    });
  }

  function isolated(values) {
    var indices = [];
    for (var index = 0; index < values.length; index++) {
      if (values[index] === null) continue;
      var before = index === 0 ? null : values[index - 1];
      var after = index === values.length - 1 ? null : values[index + 1];
      if (before === null && after === null) indices.push(index);
    }
    return indices;
  }

  var plots = [];
  data.charts.forEach(function (chart) {
    var target = document.getElementById('chart-' + chart.id);
    if (target === null) return;
    var format = formats[chart.unit] || formats.count;
    var series = [{ value: function (self, value) { return value === null ? '-' : new Date(value * 1000).toISOString().slice(0, 16).replace('T', ' ') + ' UTC'; } }];
    chart.series.forEach(function (line) {
      var points = isolated(line.values);
      series.push({
        label: line.label,
        stroke: line.color,
        width: 1.75,
        fill: line.fill || undefined,
        value: function (self, value) { return format(value); },
        points: { show: true, size: 6, fill: line.color, filter: function () { return points; } },
      });
    });
    function axis(own) {
      return Object.assign({ stroke: '#6b7280', font: FONT, gap: TICK_GAP, grid: { stroke: '#eef0f3' }, ticks: { stroke: '#e5e7eb', size: TICK } }, own);
    }
    var xAxis = axis({
      space: widestTime + GAP,
      size: TICK + TICK_GAP + LINE + 4,
      values: function (self, splits, axisIndex, space, step) {
        return keepApart(self, 'x', splits, splits.map(function (split) { return timeLabel(split, step); }), textWidth);
      },
    });
    var yAxis = axis({
      space: LINE + GAP + 3,
      // The gutter holds the widest value, and half the first time label, which is centred on the plot's left edge.
      size: function (self, values) {
        var widest = (values || []).reduce(function (most, value) { return value === null ? most : Math.max(most, textWidth(value)); }, 0);
        return Math.ceil(Math.max(widest, widestTime / 2) + TICK + TICK_GAP + 6);
      },
      values: function (self, splits, axisIndex, space, step) {
        return keepApart(self, 'y', splits, tickLabels(chart.unit, splits, step), function () { return LINE; });
      },
    });
    if (chart.unit === 'count' || chart.unit === 'ms') yAxis.incrs = wholeSteps;
    var options = {
      width: target.clientWidth,
      height: HEIGHT,
      // Room above for half the top value label, right for half the last time label.
      padding: [Math.ceil(LINE / 2) + 4, Math.ceil(widestTime / 2) + 4, 0, 0],
      series: series,
      tzDate: function (seconds) { return uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'); },
      scales: { x: { time: true }, y: { range: function (self, min, max) { return [0, max > 0 ? max * 1.1 : 1]; } } },
      axes: [xAxis, yAxis],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
    };
    var columns = [data.x].concat(chart.series.map(function (line) { return line.values; }));
    plots.push({ plot: new uPlot(options, columns, target), target: target, width: target.clientWidth });
  });

  // Redrawn in the next frame, once for every change that came before it.
  var frame = 0;
  function fit() {
    frame = 0;
    plots.forEach(function (entry) {
      var width = entry.target.clientWidth;
      if (width > 0 && width !== entry.width) {
        entry.width = width;
        entry.plot.setSize({ width: width, height: HEIGHT });
      }
    });
  }
  function schedule() { if (frame === 0) frame = requestAnimationFrame(fit); }
  if (typeof ResizeObserver === 'undefined') window.addEventListener('resize', schedule);
  else {
    var observer = new ResizeObserver(schedule);
    plots.forEach(function (entry) { observer.observe(entry.target); });
  }
})();
`;
