// The search bar (API.md "Search and hashtags"): people search with each result's degree and
// relationship, the trends panel, and a hashtag's page. Routes: #/search[/<query>] (a link can
// open a search), #/tag/<tag>.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { html, useApp, usePaged, Sentinel, ErrorNote, Avatar, Icon, userHref, go } from "./ui.js";
import { TweetList } from "./tweets.js";

const DEGREES = { 1: "1st", 2: "2nd", 3: "3rd" };
const RELATIONSHIPS = { following: "Following", followed_by: "Follows you", friends: "Friends" };
const TYPING_MS = 250; // a request once typing pauses, not one per keystroke

export const tagHref = (tag) => "#/tag/" + encodeURIComponent(tag);

function PersonRow({ user }) {
  const degree = DEGREES[user.degree];
  const relationship = RELATIONSHIPS[user.relationship];
  return html`<a class="person" href=${userHref(user)} data-testid="person" data-user-id=${user.id}>
    <${Avatar} user=${user} />
    <div class="person-body">
      <div class="person-name"><b>${user.display_name || user.username}</b>
        ${degree && html` <span class="degree" data-testid="degree" title="Connection degree on the friends graph">${degree}</span>`}
        ${relationship && html` <span class="rel-badge" data-testid="relationship">${relationship}</span>`}</div>
      <div class="handle">@${user.username} · ${user.followers_count} follower${user.followers_count === 1 ? "" : "s"}</div>
    </div>
  </a>`;
}

function People({ query }) {
  const { api } = useApp();
  const fetchPage = useCallback((cursor) => api.get("/v1/search/users", { q: query, cursor }), [api, query]);
  const paged = usePaged(fetchPage, query);
  return html`<div class="people" aria-live="polite">
    ${paged.items.map((u) => html`<${PersonRow} key=${u.id} user=${u} />`)}
    <${ErrorNote} error=${paged.error} />
    ${!paged.loading && !paged.error && paged.items.length === 0 && html`<p class="empty">Nobody matches “${query}”.</p>`}
    <${Sentinel} onVisible=${paged.more} done=${paged.done} loading=${paged.loading} />
  </div>`;
}

export function TrendsPanel() {
  const { api } = useApp();
  const [trends, setTrends] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { api.get("/v1/trends").then((t) => setTrends(t.items), setError); }, []);
  return html`<section class="trends" aria-label="Trends">
    <h2 class="sub">Trends in the last hour</h2>
    <${ErrorNote} error=${error} />
    ${trends && trends.length === 0 && html`<p class="empty">Nothing trends yet: a tag trends once several people use it.</p>`}
    ${trends && html`<ol class="trend-list">${trends.map((t, i) => html`<li key=${t.tag} data-testid="trend">
      <a href=${tagHref(t.tag)}><span class="rank">${i + 1}</span> <b>#${t.tag}</b></a>
      <div class="small">${t.author_count} people · ${t.tweet_count} post${t.tweet_count === 1 ? "" : "s"}</div></li>`)}</ol>`}
  </section>`;
}

export function SearchPage({ query: routed = "" }) {
  const [text, setText] = useState(routed);
  const [query, setQuery] = useState(routed.trim());
  const timer = useRef(null);
  useEffect(() => { setText(routed); setQuery(routed.trim()); }, [routed]);

  function typed(value) {
    setText(value);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setQuery(value.trim()), TYPING_MS);
  }
  useEffect(() => () => clearTimeout(timer.current), []);

  const hashtag = query.startsWith("#") && query.length > 1;
  return html`<section class="page">
    <h1>Search</h1>
    <form class="search-bar" role="search" onSubmit=${(e) => { e.preventDefault(); if (hashtag) go("tag/" + encodeURIComponent(query.slice(1))); }}>
      <${Icon} name="search" />
      <input type="search" name="q" value=${text} maxlength="60" autofocus placeholder="Search people (or #tag)"
        aria-label="Search people" onInput=${(e) => typed(e.currentTarget.value)} />
    </form>
    ${hashtag && html`<p class="hint"><a href=${tagHref(query.slice(1))}>See posts tagged ${query}</a></p>`}
    ${query && !hashtag ? html`<${People} query=${query} />` : html`<${TrendsPanel} />`}
  </section>`;
}

export function HashtagPage({ tag }) {
  const { api } = useApp();
  const fetchPage = useCallback((cursor) => api.get(`/v1/hashtags/${encodeURIComponent(tag)}/tweets`, { cursor }), [api, tag]);
  const paged = usePaged(fetchPage, tag);
  return html`<section class="page">
    <h1><button class="back" onClick=${() => history.back()} title="Back"><${Icon} name="back" /></button> #${tag}</h1>
    <${TweetList} paged=${paged} empty=${"No posts with #" + tag + " yet."} />
  </section>`;
}
