import type { ComponentChildren } from 'preact';
import type { Pagination } from '../api.js';
import type { Resource } from '../hooks.js';
import { ErrorBox, Loading, PaginationBar } from './ui.js';

/**
 * One page of a list as a table, with the states every list shares: the error with a retry, the
 * skeleton before the first answer, `empty` when the page has no rows, and the pagination bar.
 * A reload keeps the rows on screen, dimmed, rather than flashing the skeleton.
 */
export function PagedTable<Page extends { pagination: Pagination }, Item>({
  list,
  items,
  row,
  columns,
  caption,
  tableClass,
  noun,
  errorTitle,
  loadingLabel,
  empty,
  onPage,
}: {
  list: Resource<Page>;
  items: (page: Page) => Item[];
  row: (item: Item) => ComponentChildren;
  /** The column headings, in order. */
  columns: ComponentChildren[];
  caption: string;
  tableClass: string;
  /** What the rows are, plural, for the pagination bar. */
  noun: string;
  errorTitle: string;
  loadingLabel: string;
  empty: ComponentChildren;
  onPage: (page: number) => void;
}) {
  if (list.error) {
    return (
      <div class="pad">
        <ErrorBox error={list.error} onRetry={list.reload} title={errorTitle} />
      </div>
    );
  }
  if (!list.data) {
    return (
      <div class="pad">
        <Loading label={loadingLabel} rows={5} />
      </div>
    );
  }
  const shown = items(list.data);
  if (shown.length === 0) return <>{empty}</>;
  return (
    <>
      {/* Focusable, so that a keyboard can scroll a table wider than a narrow screen (its rows may hold no link). */}
      <div
        class={`table-wrap ${list.loading ? 'is-refreshing' : ''}`}
        tabIndex={0}
        role="region"
        aria-label={`${caption}, scrollable`}
      >
        <table class={tableClass}>
          <caption class="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {columns.map((heading, index) => (
                <th key={index} scope="col">
                  {heading}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>{shown.map(row)}</tbody>
        </table>
      </div>
      <PaginationBar pagination={list.data.pagination} onPage={onPage} noun={noun} />
    </>
  );
}

/** The heading of a column of row buttons: named for screen readers, blank on screen. */
export const ACTIONS_COLUMN = <span class="visually-hidden">Actions</span>;
