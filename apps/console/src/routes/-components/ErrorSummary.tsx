import { useEffect, useRef } from 'react';
import { sentence } from '@onsale/shared/words';

/** Moves focus to a form field by its id (the Field component gives each control its name as id) and shows it. */
export function focusField(id: string): void {
  const el = document.getElementById(id) ?? document.querySelector<HTMLElement>(`[name="${CSS.escape(id)}"]`);
  if (!el) return;
  el.scrollIntoView({ block: 'center' });
  el.focus({ preventScroll: true });
}

/**
 * The problems of a form, listed at its top with a link to each field (focus moves to this list when it appears,
 * so a keyboard or screen-reader user hears what is wrong and can jump to it). `labels` names fields in words;
 * a field without a label is named by the nearest label the page has for it.
 */
export function ErrorSummary({
  errors,
  labels = {},
  prefixOf,
  title = 'There is a problem',
  testId = 'error-summary',
}: {
  errors: Record<string, string>;
  labels?: Record<string, string>;
  /** Words before a repeated row's label ("Section 2: Code"), from the field's path. */
  prefixOf?: (field: string) => string | undefined;
  title?: string;
  testId?: string;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const entries = inPageOrder(Object.entries(errors));
  const key = entries.map(([k, v]) => `${k}=${v}`).join('\n');
  useEffect(() => {
    if (key) ref.current?.focus();
  }, [key]);
  if (entries.length === 0) return null;
  return (
    <div className="error-summary" role="alert" aria-labelledby={`${testId}-title`} tabIndex={-1} ref={ref} data-testid={testId}>
      <h2 id={`${testId}-title`}>
        {title}: {entries.length === 1 ? 'one field needs' : `${entries.length} fields need`} attention
      </h2>
      <ul>
        {entries.map(([field, message]) => (
          <li key={field}>
            <a
              href={`#${field}`}
              data-field={field}
              onClick={(e) => {
                e.preventDefault();
                focusField(field);
              }}
            >
              {prefixOf?.(field) ? `${prefixOf(field)}, ` : ''}
              {labelOf(field, labels)}: {sentence(message)}
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A field's name in words: the given label, else the text of its <label> on the page, else its path. */
function labelOf(field: string, labels: Record<string, string>): string {
  if (labels[field]) return labels[field];
  if (typeof document !== 'undefined') {
    const label = document.querySelector(`label[for="${CSS.escape(field)}"]`)?.textContent?.trim();
    if (label) return label;
  }
  return field;
}

/** Fields in the order the page shows them (a form reads top to bottom); fields not on the page last, as given. */
function inPageOrder(entries: [string, string][]): [string, string][] {
  if (typeof document === 'undefined') return entries;
  const el = (f: string) => document.getElementById(f);
  return entries
    .map((e, i) => ({ e, i, node: el(e[0]) }))
    .sort((a, b) => {
      if (a.node && b.node) return a.node.compareDocumentPosition(b.node) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1;
      if (a.node) return -1;
      if (b.node) return 1;
      return a.i - b.i;
    })
    .map((x) => x.e);
}

/** The row a path of the event form is in, in words: sections.1.code -> "Section 2". */
export function eventRowOf(field: string): string | undefined {
  const m = /^(sections|priceLevels|allocations)\.(\d+)\./.exec(field);
  if (!m) return undefined;
  const what = { sections: 'Section', priceLevels: 'Price level', allocations: 'Tier' }[m[1] as 'sections' | 'priceLevels' | 'allocations'];
  return `${what} ${Number(m[2]) + 1}`;
}
