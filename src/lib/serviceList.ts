/**
 * A Wall of Fame list the page reads from the service after load (docs/design.md#6b, #8): the
 * auction's winners and the Verified Patrons. The element that fills one (src/scripts/serviceList.ts)
 * is the same for both; what differs is here, one ServiceListKind per list: how the answer is
 * checked (the service may be on another origin and another version) and how a row is filled.
 */

/** A row's field, by the name its template gives it (`data-field="name"`). */
export type RowField = (name: string) => HTMLElement;

export interface ServiceListKind<Item> {
  /** The items of a GET answer's JSON, at most as many as the list shows, or null when it is not the expected shape. */
  parse(data: unknown): Item[] | null;
  /** Fills a clone of the list's row template. Text goes in as textContent: a name is never parsed as HTML. */
  fillRow(item: Item, field: RowField): void;
  emptyText: string;
  unavailableText: string;
  /** A 404 means the feature is off (payments), and the list's section stays hidden. */
  offWhenNotFound: boolean;
}
