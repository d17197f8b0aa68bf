/** The browser tab's title of a page: its own title first, so tabs and history tell pages apart. */
export const pageTitle = (title: string | undefined): string =>
  title ? `${title} · Meridian dashboard` : 'Meridian dashboard';
