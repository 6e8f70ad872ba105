// Shared pieces: the html tag, the app context, the hash router, paging and small widgets.
import { h, createContext } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";

export const html = htm.bind(h);
export const AppContext = createContext(null);
export const useApp = () => useContext(AppContext);

// --- routing: #/path/segments ---------------------------------------------------------------
const parseHash = () => (location.hash.replace(/^#\/?/, "") || "home").split("/").map(decodeURIComponent);

export function useRoute() {
  const [route, setRoute] = useState(parseHash);
  useEffect(() => {
    const onChange = () => setRoute(parseHash());
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

export const go = (path) => { location.hash = "#/" + path; };

// How many of the app's own routes this tab's history holds before this one (kept in each
// entry's history.state): a shared link opened fresh is 0, and its Back goes home instead of
// leaving the app (to about:blank, or the site the link was on).
let depth = 0;
export function trackHistory() {
  depth = (history.state && history.state.depth) || 0;
  if (!history.state) history.replaceState({ depth }, "");
  addEventListener("hashchange", () => {
    if (history.state && typeof history.state.depth === "number") depth = history.state.depth;
    else history.replaceState({ depth: ++depth }, "");
  });
}
export const back = () => (depth > 0 ? history.back() : go("home"));
export const userHref = (user) => `#/u/${encodeURIComponent(user.username)}`;

// --- paging by cursor -----------------------------------------------------------------------
// `fetchPage(cursor)` answers {items, next_cursor}; `key` restarts from the first page.
export function usePaged(fetchPage, key) {
  const [state, setState] = useState({ items: [], cursor: null, done: false, loading: true, error: null });
  const busy = useRef(false);
  const generation = useRef(0);

  const load = useCallback(async (reset, keep = false) => {
    if (busy.current && !reset) return;
    const gen = reset ? ++generation.current : generation.current;
    busy.current = true;
    setState((s) => ({ ...s, loading: !keep, error: null, ...(reset && !keep ? { items: [], cursor: null, done: false } : {}) }));
    try {
      const cursor = reset ? null : state.cursor;
      const page = await fetchPage(cursor);
      if (gen !== generation.current) return;
      setState((s) => {
        const seen = new Set(reset ? [] : s.items.map((i) => itemKey(i)));
        const fresh = page.items.filter((i) => !seen.has(itemKey(i)));
        return { items: [...(reset ? [] : s.items), ...fresh], cursor: page.next_cursor, done: !page.next_cursor, loading: false, error: null };
      });
    } catch (error) {
      if (gen === generation.current) setState((s) => ({ ...s, loading: false, error }));
    } finally {
      if (gen === generation.current) busy.current = false;
    }
  }, [fetchPage, state.cursor]);

  useEffect(() => { load(true); }, [key]);

  const update = useCallback((fn) => setState((s) => ({ ...s, items: fn(s.items) })), []);
  // `refresh` reads the first page again and swaps it in when it comes: the list shown meanwhile
  // stays (a reload empties it first, which is right when what it lists has changed).
  return { ...state, more: () => !state.done && !state.loading && load(false), reload: () => load(true), refresh: () => load(true, true), update };
}

const itemKey = (item) => item.id || item.session_id || (item.user && item.user.id) || JSON.stringify(item);

// Calls `onVisible` whenever the bottom of a list scrolls into view (infinite scroll).
export function Sentinel({ onVisible, done, loading }) {
  const ref = useRef(null);
  const callback = useRef(onVisible);
  callback.current = onVisible;
  useEffect(() => {
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) callback.current();
    }, { rootMargin: "200px" });
    observer.observe(ref.current);
    return () => observer.disconnect();
  }, []);
  return html`<div ref=${ref} class="sentinel">${loading ? "Loading…" : done ? "" : " "}</div>`;
}

// --- widgets --------------------------------------------------------------------------------
export function ErrorNote({ error }) {
  if (!error) return null;
  const text = error.text || error.message || String(error);
  return html`<p class="error" role="alert">${text}</p>`;
}

export function Badge({ n, label }) {
  if (!n) return null;
  return html`<span class="badge" data-badge=${label} aria-label="${n} unread">${n > 99 ? "99+" : n}</span>`;
}

const COLORS = ["#1d9bf0", "#7856ff", "#f91880", "#00ba7c", "#ff7a00", "#e0245e", "#17bf63", "#794bc4"];
export function Avatar({ user, size = 40 }) {
  const name = (user && (user.display_name || user.username)) || "?";
  let hash = 0;
  for (const c of (user && user.username) || name) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  const style = `width:${size}px;height:${size}px;font-size:${Math.round(size * 0.45)}px;background:${COLORS[hash % COLORS.length]}`;
  return html`<span class="avatar" style=${style} aria-hidden="true">${[...name][0].toUpperCase()}</span>`;
}

export function ago(iso) {
  const seconds = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (seconds < 45) return "now";
  if (seconds < 3600) return `${Math.round(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)}h`;
  return new Date(iso).toLocaleDateString(undefined, { month: "short", day: "numeric" });
}

export const Time = ({ iso }) => html`<time datetime=${iso} title=${new Date(iso).toLocaleString()}>${ago(iso)}</time>`;

// Text with @mentions linked to profiles, #hashtags to their pages and web addresses linked
// out. A #word is linked when the tweet's `hashtags` (the server's one rule, API.md) has it, so
// the two never disagree. Only http and https become links (never javascript: or data:), opened
// apart from the app, without a referrer and without vouching for them.
const RICH = /@([A-Za-z0-9_]{1,15})|(?<![\p{L}\p{N}\p{M}_])#([\p{L}\p{N}_][\p{L}\p{N}\p{M}_]*)|\bhttps?:\/\/[^\s<>"']+/gu;
const TRAILING = /[.,;:!?)\]}'"]+$/; // "see https://a.example." links without the full stop

export function RichText({ text, tags = [] }) {
  const parts = [];
  let last = 0;
  for (const m of text.matchAll(RICH)) {
    const tag = m[2] && m[2].normalize("NFKC").toLowerCase();
    if (m[2] && !tags.includes(tag)) continue;
    let found = m[0];
    if (!m[1] && !m[2]) found = found.replace(TRAILING, "");
    if (m.index > last) parts.push(text.slice(last, m.index));
    parts.push(m[1]
      ? html`<a href=${"#/u/" + m[1]}>@${m[1]}</a>`
      : m[2]
        ? html`<a class="hashtag" href=${"#/tag/" + encodeURIComponent(tag)}>#${m[2]}</a>`
        : html`<a href=${found} target="_blank" rel="noopener noreferrer nofollow">${found}</a>`);
    last = m.index + found.length;
  }
  parts.push(text.slice(last));
  return html`<span class="text">${parts}</span>`;
}

// What a count says: "1 Tweet", "2 Tweets".
export const plural = (n, one, many = one + "s") => (n === 1 ? one : many);

// A full date and time, for a tweet's own page.
export const fullTime = (iso) => new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });

// API.md's rule for tweet length: characters (code points) after NFC normalisation.
export const tweetLength = (text) => [...text.normalize("NFC")].length;

// Line icons drawn here (24x24, stroked), so nothing depends on an emoji font.
const ICON_PATHS = {
  home: "M3 10.5 12 3l9 7.5V21h-6v-6H9v6H3z",
  bell: "M6 16v-5a6 6 0 0 1 12 0v5l2 2H4zM10 20a2 2 0 0 0 4 0",
  mail: "M3 5h18v14H3zM3 6l9 7 9-7",
  compass: "M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18zM15.5 8.5l-2 5-5 2 2-5z",
  user: "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21a8 8 0 0 1 16 0",
  lock: "M6 11h12v10H6zM8 11V7a4 4 0 0 1 8 0v4",
  gear: "M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6zM12 2v3M12 19v3M2 12h3M19 12h3M4.9 4.9l2.1 2.1M17 17l2.1 2.1M4.9 19.1 7 17M17 7l2.1-2.1",
  reply: "M4 5h16v11H9l-5 4z",
  retweet: "M7 4 4 7l3 3M4 7h11a3 3 0 0 1 3 3v2M17 20l3-3-3-3M20 17H9a3 3 0 0 1-3-3v-2",
  heart: "M12 20s-7-4.5-9-9a4.5 4.5 0 0 1 9-3 4.5 4.5 0 0 1 9 3c-2 4.5-9 9-9 9z",
  trash: "M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13",
  pin: "M12 21s-7-6.5-7-12a7 7 0 0 1 14 0c0 5.5-7 12-7 12zM12 11.5a2.5 2.5 0 1 0 0-5 2.5 2.5 0 0 0 0 5z",
  x: "M6 6l12 12M18 6 6 18",
  spark: "M12 3l2 6 6 2-6 2-2 6-2-6-6-2 6-2z",
  at: "M16 12a4 4 0 1 1-8 0 4 4 0 0 1 8 0zM16 12v1.5a2.5 2.5 0 0 0 5 0V12a9 9 0 1 0-4 7.5",
  back: "M19 12H5M11 6l-6 6 6 6",
  logout: "M15 4h4v16h-4M10 8l-4 4 4 4M6 12h10",
  shield: "M12 3l8 3v6c0 5-3.5 8-8 9-4.5-1-8-4-8-9V6zM8.5 8.5l7 7",
  more: "M5 12h.01M12 12h.01M19 12h.01",
  search: "M11 4a7 7 0 1 0 0 14 7 7 0 0 0 0-14zM20 20l-4-4",
  flag: "M5 21V4M5 4h12l-2.5 4.5L17 13H5",
};

export function Icon({ name, filled = false, size = 20 }) {
  return html`<svg class=${"icon-svg " + name} width=${size} height=${size} viewBox="0 0 24 24" fill=${filled ? "currentColor" : "none"}
    stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><path d=${ICON_PATHS[name]} /></svg>`;
}

export const Logo = () => html`<span class="logo-mark" aria-hidden="true"><svg width="28" height="28" viewBox="0 0 24 24">
  <path fill="currentColor" d="M21 6.5c-.7.3-1.4.5-2.1.6.8-.5 1.3-1.2 1.6-2-.7.4-1.5.7-2.3.9a3.6 3.6 0 0 0-6.2 3.3A10.3 10.3 0 0 1 4.5 5.5a3.6 3.6 0 0 0 1.1 4.8c-.6 0-1.2-.2-1.6-.4 0 1.8 1.2 3.3 2.9 3.6-.5.1-1.1.2-1.6.1.5 1.4 1.8 2.5 3.4 2.5A7.3 7.3 0 0 1 3 17.6 10.3 10.3 0 0 0 8.6 19c6.7 0 10.4-5.6 10.4-10.4v-.5c.8-.5 1.4-1.1 2-1.6z" /></svg></span>`;
