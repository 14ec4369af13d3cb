// A table's row written once: each field of the row beside the SQL that reads it. From that one
// map come the SELECT list, the same row as one SQL JSON object (to nest it in another row), and
// the reader that turns what SQLite answers into the row. The statements around them stay
// hand-written in the stores; every SQL text here is a constant of a store, never client input.

/** SQL of one field, given the alias (or name) of the table it is read from. */
export type FieldSql = (table: string) => string;

/**
 * How a field arrives from SQLite: as is, as 0/1 for a boolean, or as JSON text (a JSON column,
 * or a subquery that builds JSON).
 */
type FieldType = 'value' | 'boolean' | 'json';

interface Field {
  sql: FieldSql;
  type: FieldType;
}

/** A field as written in a map: a column name, or a `boolean`/`json`/`expression` of SQL. */
export type FieldSpec = string | Field;

/** A SQL expression read as is (a count, a coalesce). */
export const expression = (sql: FieldSql): Field => ({ sql, type: 'value' });
/** A 0/1 column or expression, read as false/true. */
export const boolean = (sql: FieldSql | string): Field => ({ sql: sqlOf(sql), type: 'boolean' });
/** A JSON column, or a subquery answering JSON text, read as its value (null stays null). */
export const json = (sql: FieldSql | string): Field => ({ sql: sqlOf(sql), type: 'json' });

const column =
  (name: string): FieldSql =>
  (table) =>
    `${table}.${name}`;
const sqlOf = (sql: FieldSql | string): FieldSql => (typeof sql === 'string' ? column(sql) : sql);

export type FieldSpecs<Row> = { [Key in keyof Row]: FieldSpec };

export interface ColumnMap<Row> {
  /** The SELECT list of the table `table` (its name or alias), each field named as the row names it. */
  select(table: string): string;
  /** The row of `table` as one SQL JSON object, for nesting in another row's SELECT (read it with `fromJson`). */
  jsonSql(table: string): string;
  /** Finishes a row selected with `select`, in place: booleans from 0/1, JSON fields parsed. */
  fromRow(raw: Record<string, unknown>): Row;
  /** Reads a row built by `jsonSql` and parsed: its values already have their types. */
  fromJson(raw: Record<string, unknown>): Row;
}

export function columnMap<Row>(specs: FieldSpecs<Row>): ColumnMap<Row> {
  const fields = Object.entries(specs as Record<string, FieldSpec>).map(([key, spec]) => {
    const field = typeof spec === 'string' ? { sql: column(spec), type: 'value' as const } : spec;
    return { key, ...field };
  });
  const booleans = fields.filter((field) => field.type === 'boolean').map((field) => field.key);
  const jsons = fields.filter((field) => field.type === 'json').map((field) => field.key);
  const jsonValue = ({ sql, type }: Field, table: string) =>
    type === 'boolean' ? `json(iif(${sql(table)}, 'true', 'false'))` : type === 'json' ? `json(${sql(table)})` : sql(table);

  return {
    select: (table) => fields.map((field) => `${field.sql(table)} AS "${field.key}"`).join(',\n  '),
    jsonSql: (table) => `json_object(${fields.map((field) => `'${field.key}', ${jsonValue(field, table)}`).join(',\n    ')})`,
    fromRow(raw) {
      // Converted in place: better-sqlite3 answers a fresh object per row, its keys in SELECT order.
      for (const key of booleans) raw[key] = raw[key] === 1;
      for (const key of jsons) raw[key] = raw[key] === null ? null : JSON.parse(raw[key] as string);
      return raw as Row;
    },
    fromJson: (raw) => raw as Row,
  };
}
