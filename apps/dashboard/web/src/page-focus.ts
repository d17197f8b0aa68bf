/** What the layout last showed: its path, and whether a page change has moved focus yet. */
export interface ShownPage {
  pathname: string;
  navigated: boolean;
}

/** React Router's navigation types (useNavigationType). */
export type NavigationType = 'POP' | 'PUSH' | 'REPLACE';

/**
 * Whether a location change moves focus to the new page's h1, as the GOV.UK and React Router
 * pattern does: screen readers do not read an SPA's title change, so focus stays on the link
 * pressed and nothing says the page changed (QA). Only a new path does (a `navigate('.')` that
 * drops a history entry's state is not a new page), and never the first load: neither the page
 * the layout opens on nor a redirect of it (`<Navigate replace>`, the operator's `/`) takes
 * the focus from where the browser puts it, so the first Tab still reaches the skip link.
 */
export function pageChange(
  previous: ShownPage | null,
  pathname: string,
  type: NavigationType,
): { shown: ShownPage; moveFocus: boolean } {
  if (previous === null) return { shown: { pathname, navigated: false }, moveFocus: false };
  if (previous.pathname === pathname) return { shown: previous, moveFocus: false };
  if (type === 'REPLACE' && !previous.navigated)
    return { shown: { pathname, navigated: false }, moveFocus: false };
  return { shown: { pathname, navigated: true }, moveFocus: true };
}
