// Notifications: a tab per type with its live unread badge, the list by cursor (new ones pushed
// over the WebSocket arrive at the top), mark one type read or all.
import { useCallback, useEffect } from "preact/hooks";
import { html, useApp, usePaged, Sentinel, ErrorNote, Avatar, Badge, Icon, Time, userHref } from "./ui.js";

export const NOTIFICATION_TYPES = ["follow", "like", "reply", "mention", "retweet", "match", "system"];
const LABELS = { all: "All", follow: "Follows", like: "Likes", reply: "Replies", mention: "Mentions", retweet: "Retweets", match: "Matches", system: "System" };
const ICONS = { follow: "user", like: "heart", reply: "reply", mention: "at", retweet: "retweet", match: "spark", system: "bell" };

export function NotificationsPage({ type = "all" }) {
  const { api, counts, live, markRead } = useApp();
  const types = type === "all" ? undefined : type;
  const fetchPage = useCallback((cursor) => api.notifications(types, cursor), [api, types]);
  const paged = usePaged(fetchPage, type);

  useEffect(() => live && live.on((event, data) => {
    if (event === "notification" && data.id && (type === "all" || data.type === type)) {
      paged.update((items) => (items.some((n) => n.id === data.id) ? items : [data, ...items]));
    }
    if (event === "reconnected") paged.reload(); // what was pushed meanwhile never came
  }), [live, type]);

  const unreadHere = type === "all" ? NOTIFICATION_TYPES.reduce((s, t) => s + (counts[t] || 0), 0) : counts[type] || 0;
  async function mark(all) {
    await markRead(all ? null : [type]);
    paged.update((items) => items.map((n) => (all || n.type === type ? { ...n, read: true } : n)));
  }

  return html`<section class="page">
    <h1>Notifications</h1>
    <nav class="tabs wrap">
      ${["all", ...NOTIFICATION_TYPES].map((t) => html`<a class=${t === type ? "on" : ""} href=${t === "all" ? "#/notifications" : "#/notifications/" + t} data-type=${t}>
        ${LABELS[t]} <${Badge} n=${t === "all" ? null : counts[t]} label=${t} /></a>`)}
    </nav>
    <div class="toolbar">
      ${type !== "all" && html`<button onClick=${() => mark(false)} disabled=${!unreadHere}>Mark ${LABELS[type].toLowerCase()} read</button>`}
      <button onClick=${() => mark(true)} disabled=${!counts.total}>Mark all read</button>
    </div>
    <ul class="notifications">
      ${paged.items.map((n) => html`<${Notification} key=${n.id} n=${n} />`)}
    </ul>
    <${ErrorNote} error=${paged.error} />
    ${!paged.loading && !paged.error && !paged.items.length && html`<p class="empty">No notifications yet.</p>`}
    <${Sentinel} onVisible=${paged.more} done=${paged.done} loading=${paged.loading} />
  </section>`;
}

function Notification({ n }) {
  const actor = n.actor && html`<a class="name" href=${userHref(n.actor)}>${n.actor.display_name || n.actor.username}</a>`;
  const tweet = (label) => (n.tweet_id ? html`<a href=${"#/tweet/" + n.tweet_id}>${label}</a>` : label);
  const text = {
    follow: html`${actor} followed you`,
    like: html`${actor} liked ${tweet("your tweet")}`,
    reply: html`${actor} ${tweet("replied")} to your tweet`,
    mention: html`${actor} mentioned you in ${tweet("a tweet")}`,
    retweet: html`${actor} retweeted ${tweet("your tweet")}`,
    match: html`You matched with ${actor}`,
    system: html`<b>${n.title}</b><div>${n.body}</div>`,
  }[n.type] || n.type;
  return html`<li class=${"notification" + (n.read ? "" : " unread")} data-type=${n.type}>
    <span class=${"n-icon " + n.type}><${Icon} name=${ICONS[n.type] || "bell"} size=${22} filled=${n.type === "like" || n.type === "match"} /></span>
    ${n.actor && html`<${Avatar} user=${n.actor} size=${32} />`}
    <div class="n-text">${text}</div>
    <${Time} iso=${n.created_at} />
  </li>`;
}
