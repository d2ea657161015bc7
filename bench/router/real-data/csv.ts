/**
 * A small, strict CSV reader (RFC 4180): fields separated by commas, records
 * by LF or CRLF; a field in double quotes may hold commas, line breaks and
 * doubled quotes (""). A final line break does not start an empty record. A
 * quote inside an unquoted field, text after a closing quote, or a quote left
 * open is an error naming its line: the data sets read with it are published
 * files, and a misread one would silently change every figure.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  /** The current field was quoted and its closing quote has been read. */
  let closed = false;
  let line = 1;
  let quoteLine = 1;
  const endField = (): void => {
    record.push(field);
    field = '';
    closed = false;
  };
  const endRecord = (): void => {
    endField();
    records.push(record);
    record = [];
  };
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (let index = start; index < text.length; index += 1) {
    const character = text[index];
    if (quoted) {
      if (character === '"') {
        if (text[index + 1] === '"') {
          field += '"';
          index += 1;
        } else {
          quoted = false;
          closed = true;
        }
      } else {
        if (character === '\n') line += 1;
        field += character;
      }
    } else if (character === ',') endField();
    else if (character === '\n' || (character === '\r' && text[index + 1] === '\n')) {
      if (character === '\r') index += 1;
      endRecord();
      line += 1;
    } else if (closed) throw new SyntaxError(`CSV line ${line}: text after a closing quote`);
    else if (character === '"') {
      if (field !== '') throw new SyntaxError(`CSV line ${line}: a quote inside an unquoted field`);
      quoted = true;
      quoteLine = line;
    } else field += character;
  }
  if (quoted) throw new SyntaxError(`CSV line ${quoteLine}: a quoted field is never closed`);
  if (field !== '' || closed || record.length > 0) endRecord();
  return records;
}

/** Records as objects keyed by the header's names; every record must have the header's number of fields. */
export function csvRecords(text: string, source: string): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(text);
  if (header === undefined) throw new SyntaxError(`${source}: no header line`);
  return rows.map((row, index) => {
    if (row.length !== header.length)
      throw new SyntaxError(`${source}: record ${index + 1} has ${row.length} fields, the header ${header.length}`);
    return Object.fromEntries(header.map((name, column) => [name, row[column] ?? '']));
  });
}
