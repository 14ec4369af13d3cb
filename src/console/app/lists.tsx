// A list of records as every page shows it: the states of a paged list (failed, loading, empty, the
// records, a button for the next page) and the table that stacks into labelled rows on a phone.
import type { ComponentChildren } from 'preact';
import { Empty, ErrorNotice, Loading, type PagedList } from './ui.js';

/**
 * `list`'s records as `children` draws them, with its failure above (`error`; leave it out when the
 * page shows it elsewhere), "Loading…" until the first page arrives, `empty` when there is none, and
 * a `more` button while there is a next page.
 */
export function PagedView<T>(props: {
  list: PagedList<T>;
  error?: string;
  empty: ComponentChildren;
  more?: string;
  children: (items: T[]) => ComponentChildren;
}) {
  const { list, error, empty, more = 'Show more', children } = props;
  return (
    <>
      <ErrorNotice error={error} />
      {!list.items ? !error && <Loading /> : list.items.length === 0 ? <Empty>{empty}</Empty> : children(list.items)}
      {list.next && (
        <button type="button" onClick={() => list.load(list.next)}>
          {more}
        </button>
      )}
    </>
  );
}

export interface Column<T> {
  /** The header, and the cell's label when the rows stack (a phone). */
  label: string;
  cell: (row: T) => ComponentChildren;
  /** Read to screen readers only, and no label on the stacked cell (a column of buttons). */
  hideLabel?: boolean;
  /** The cell changes by itself (a status that refreshes): screen readers say the change. */
  live?: boolean;
  /** The cell's class (`clip`: long text cut to one line). */
  class?: string;
}

/** One row per record, one column per `columns` entry; `rowData` gives a row its `data-` attributes (for scripts and tests). */
export function Table<T extends { id: string }>(props: {
  rows: T[];
  columns: Column<T>[];
  rowData?: (row: T) => Record<`data-${string}`, string>;
}) {
  const { rows, columns, rowData } = props;
  return (
    <div class="table-wrap">
      <table class="stack">
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.label} scope="col">
                {column.hideLabel ? <span class="visually-hidden">{column.label}</span> : column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id} {...rowData?.(row)}>
              {columns.map((column) => (
                <td
                  key={column.label}
                  data-label={column.hideLabel ? undefined : column.label}
                  aria-live={column.live ? 'polite' : undefined}
                  class={column.class}
                >
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
