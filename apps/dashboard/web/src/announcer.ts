/**
 * The page's one polite live region (Layout renders it, outside the page so it outlives a list
 * that empties or a page that changes): what an action changed that the focus does not show
 * ("Webhook paused.", "3 deliveries match this search."). A screen reader reads a region's
 * change, so the same words twice in a row differ by a trailing no-break space: both are read.
 */
export interface Announcer {
  announce(text: string): void;
  /** The region's text now. */
  snapshot(): string;
  subscribe(listener: () => void): () => void;
}

export function createAnnouncer(): Announcer {
  let text = '';
  const listeners = new Set<() => void>();
  return {
    announce(next) {
      text = text === next ? `${next}\u00a0` : next;
      for (const listener of listeners) listener();
    },
    snapshot: () => text,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The dashboard's: `announce` from anywhere, Layout's `Announcements` reads it out. */
export const announcer = createAnnouncer();
export const announce = (text: string) => announcer.announce(text);
