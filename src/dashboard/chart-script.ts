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
 */
export const CHART_SCRIPT = String.raw`(function () {
  'use strict';
  var source = document.getElementById('chart-data');
  if (source === null || typeof uPlot === 'undefined') return;
  var data = JSON.parse(source.textContent);

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
    var options = {
      width: Math.max(240, target.clientWidth),
      height: 170,
      series: series,
      // The pages write times in UTC (the server does not know the viewer's zone); the axes agree.
      tzDate: function (seconds) { return uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'); },
      scales: { x: { time: true }, y: { range: function (self, min, max) { return [0, max > 0 ? max * 1.1 : 1]; } } },
      axes: [
        { stroke: '#6b7280', grid: { stroke: '#eef0f3' }, ticks: { stroke: '#e5e7eb' } },
        { stroke: '#6b7280', size: 64, grid: { stroke: '#eef0f3' }, ticks: { stroke: '#e5e7eb' }, values: function (self, splits) { return splits.map(format); } },
      ],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
    };
    var columns = [data.x].concat(chart.series.map(function (line) { return line.values; }));
    plots.push({ plot: new uPlot(options, columns, target), target: target });
  });

  var pending = 0;
  window.addEventListener('resize', function () {
    clearTimeout(pending);
    pending = setTimeout(function () {
      plots.forEach(function (entry) { entry.plot.setSize({ width: Math.max(240, entry.target.clientWidth), height: 170 }); });
    }, 100);
  });
})();
`;
