import { describe, expect, it } from 'vitest';
import { renderTable } from './data-table.js';
import { html } from './html.js';

interface Row {
  name: string;
  calls: number;
}

const rows: Row[] = [
  { name: 'summarise', calls: 1200 },
  { name: '<b>odd</b>', calls: 0 },
];

describe('renderTable', () => {
  it("labels every cell with its column's name, for the stacked layout", () => {
    const table = renderTable<Row>({
      rows,
      columns: [
        { label: 'Workload', kind: 'long', cell: (row) => row.name },
        { label: 'Calls', kind: 'number', field: 'calls', tone: (row) => (row.calls === 0 ? 'bad' : undefined), cell: (row) => row.calls },
      ],
    }).text;
    expect(table).toContain('<th>Workload</th><th class="num">Calls</th>');
    expect(table).toContain(
      '<td class="long" data-label="Workload">summarise</td><td class="num" data-label="Calls" data-field="calls">1200</td>',
    );
    expect(table).toContain('<td class="num bad" data-label="Calls" data-field="calls">0</td>');
    expect(table.match(/<td /g)).toHaveLength(4);
    expect(table.match(/data-label=/g)).toHaveLength(4);
  });

  it('escapes cells and row attributes, and names the box by the width it needs', () => {
    const table = renderTable<Row>({
      id: 'workloads',
      breadth: 'wide',
      rows,
      rowAttributes: (row) => html` data-workload="${row.name}"`,
      columns: [{ label: 'Workload "name"', cell: (row) => row.name }],
    }).text;
    expect(table).toMatch(/^<div class="table wide"><table id="workloads">/);
    expect(table).toContain(
      '<tr data-workload="&lt;b&gt;odd&lt;/b&gt;"><td data-label="Workload &quot;name&quot;">&lt;b&gt;odd&lt;/b&gt;</td></tr>',
    );
    expect(renderTable<Row>({ rows, columns: [] }).text).toMatch(/^<div class="table">/);
  });
});
